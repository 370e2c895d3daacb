// A section under the charts whose numbers are asked for only while it is on screen (or nearly).
//
// With thousands of runs a summary or a comparison costs the backend real work; a tab left open with
// the section scrolled away must not ask for it at every TensorBoard reload. New settings or new data
// only mark it out of date; it is fetched then if it is visible, else once it scrolls into view.

const MARGIN = "150px 0px"; // fetched a little before it shows

export class LazySection {
  /**
   * @param node the section's element (observed; a hidden one is never visible)
   * @param load async () => void: fetch and draw (called only while visible)
   */
  constructor(node, load) {
    this.node = node;
    this.load = load;
    this.visible = false;
    this.stale = true;
    this.running = null;
    new IntersectionObserver((entries) => this.onIntersect(entries), { rootMargin: MARGIN }).observe(node);
  }

  onIntersect(entries) {
    for (const entry of entries) this.visible = entry.isIntersecting && !this.node.hidden;
    if (this.visible && this.stale) this.run();
  }

  /** Out of date: fetched now when visible (the returned promise settles with it), else later. */
  invalidate() {
    this.stale = true;
    return this.visible && !this.node.hidden ? this.run() : Promise.resolve();
  }

  run() {
    this.stale = false;
    this.running = Promise.resolve(this.load()).catch(() => {});
    return this.running;
  }
}
