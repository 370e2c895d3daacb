// The cards: one per tag, in sections by tag prefix (`train/...`, `val/...`) like TensorBoard's
// scalars. A card fetches and draws its chart only when it is (nearly) on screen, and a refresh that
// brings the same bytes back does not redraw it.
//
// Answers are drawn one at a time, each in a task of its own: answers that came while Plotly's script
// was still starting (most of a second on a small machine) were otherwise all drawn in one task once
// it was there, and none reached the screen before the last was drawn.

import { getText } from "./api.js";
import { clear, el, fileStem } from "./dom.js";
import { loadPlotly } from "./plotly_loader.js";
import { buildFigure, exportFigure } from "./traces.js";

const PARALLEL_FETCHES = 6; // as many as a browser opens to one server at once: the visible cards of a screen
const PLOT_CONFIG = {
  displaylogo: false,
  responsive: true,
  modeBarButtonsToRemove: ["select2d", "lasso2d", "autoScale2d"],
};

function prefixOf(tag) {
  const slash = tag.indexOf("/");
  return slash > 0 ? tag.slice(0, slash) : tag;
}

/**
 * The chart area. `hooks`:
 *   aggregateUrl(tag) -> URL of the /aggregate request for the current settings
 *   exportUrl(tag)    -> URL of the CSV export of that tag
 *   view()            -> {colors, logY, showRuns, uirevision, xTitle, theme}
 *   ready()           -> resolves with Plotly once it and the page's styles (the charts' colors) are in
 *   onCycle(timing)   -> called when every visible card is drawn after a refresh
 */
export class ChartGrid {
  constructor(root, hooks) {
    this.root = root;
    this.hooks = hooks;
    this.cards = new Map();
    this.byNode = new WeakMap(); // card element -> card, for the observer
    this.sections = new Map();
    this.queue = [];
    this.active = 0;
    this.drawing = Promise.resolve(); // the chain of draws, in order
    this.pendingDraws = 0;
    this.abort = new AbortController();
    this.cycle = null;
    this.observer = new IntersectionObserver((entries) => this.onIntersect(entries), {
      rootMargin: "200px 0px",
    });
  }

  /** Make the cards match `tags` (kept in order; cards of tags that are gone are removed). */
  setTags(tags) {
    const wanted = new Set(tags);
    for (const [tag, card] of this.cards) {
      if (wanted.has(tag)) continue;
      this.observer.unobserve(card.node);
      if (window.Plotly) window.Plotly.purge(card.plot);
      card.node.remove();
      this.cards.delete(tag);
    }
    const byPrefix = new Map();
    for (const tag of tags) {
      const prefix = prefixOf(tag);
      if (!byPrefix.has(prefix)) byPrefix.set(prefix, []);
      byPrefix.get(prefix).push(tag);
    }
    for (const [prefix, section] of this.sections) {
      if (!byPrefix.has(prefix)) {
        section.node.remove();
        this.sections.delete(prefix);
      }
    }
    for (const [prefix, sectionTags] of byPrefix) {
      let section = this.sections.get(prefix);
      if (!section) {
        const count = el("span", { className: "count" });
        const grid = el("div", { className: "card-grid" });
        const node = el(
          "details",
          { className: "tag-section", open: true, dataset: { prefix } },
          el("summary", {}, el("span", { className: "section-name", text: prefix }), count),
          grid,
        );
        section = { node, grid, count };
        this.sections.set(prefix, section);
      }
      section.count.textContent = String(sectionTags.length);
      this.root.appendChild(section.node); // appending again keeps the sections in tag order
      for (const tag of sectionTags) {
        let card = this.cards.get(tag);
        if (!card) {
          card = this.makeCard(tag);
          this.cards.set(tag, card);
          this.byNode.set(card.node, card);
          this.observer.observe(card.node);
        }
        section.grid.appendChild(card.node);
      }
    }
  }

  makeCard(tag) {
    const csv = el("a", {
      className: "button small",
      text: "CSV",
      download: "",
      title: "Download this tag's reduced curves at full resolution (CSV)",
      dataset: { role: "csv" },
    });
    const status = el("span", { className: "card-status" });
    const plot = el("div", { className: "plot" });
    const notes = el("ul", { className: "card-notes" });
    const card = {
      tag, plot, status, notes, csv,
      observed: false, visible: false, stale: true, queued: false, url: null, text: null,
    };
    // The chart as drawn, as an image made in the page by Plotly (no request): enabled once drawn.
    const image = (format, text, title) =>
      el("button", {
        type: "button",
        className: "button small",
        text,
        title,
        disabled: true,
        dataset: { role: format },
        on: { click: () => this.downloadImage(card, format) },
      });
    card.images = [
      image("svg", "SVG", "Download this chart as drawn, as a vector image (SVG)"),
      image("png", "PNG", "Download this chart as drawn, as a PNG image at twice its size on screen"),
    ];
    card.node = el(
      "article",
      { className: "card", dataset: { tag } },
      el("header", {}, el("h3", { text: tag, title: tag }), status, csv, ...card.images),
      plot,
      notes,
    );
    return card;
  }

  /** Save the card's chart as drawn: `svg`, or `png` at twice the size on screen. */
  async downloadImage(card, format) {
    if (!card.payload || !card.plot.data || card.plot.querySelector(".card-empty, .card-error")) return;
    try {
      const Plotly = await loadPlotly();
      const figure = exportFigure(card.plot, card.payload);
      await Plotly.downloadImage(figure, {
        format,
        scale: format === "png" ? 2 : 1,
        width: figure.layout.width,
        height: figure.layout.height,
        filename: `aggregate-${fileStem(card.tag)}`,
      });
    } catch (error) {
      card.status.textContent = `Could not make the image: ${error.message}`;
    }
  }

  setImagesEnabled(card, enabled) {
    for (const button of card.images) button.disabled = !enabled;
  }

  /**
   * New settings or new data: every card must be checked again; visible ones now, the others when
   * they scroll into view. `fresh` (new settings) cancels requests still running for the old ones.
   */
  refresh({ fresh }) {
    if (fresh) {
      this.abort.abort();
      this.abort = new AbortController();
      this.queue = [];
      for (const card of this.cards.values()) card.queued = false;
    }
    this.cycle = { started: performance.now(), firstArrival: null, lastDrawn: null, drawn: 0, unchanged: 0 };
    for (const card of this.cards.values()) {
      card.stale = true;
      card.csv.href = this.hooks.exportUrl(card.tag);
      if (card.visible) this.enqueue(card);
    }
    this.pump();
  }

  /** Only the look changed (log scale, theme): redraw what is drawn from the data already here. */
  async redraw() {
    for (const card of this.cards.values()) {
      if (!card.payload) continue;
      if (card.visible) await this.redrawCard(card);
      else card.viewStale = true; // redrawn when it scrolls into view
    }
  }

  onIntersect(entries) {
    for (const entry of entries) {
      const card = this.byNode.get(entry.target);
      if (!card) continue;
      card.observed = true;
      card.visible = entry.isIntersecting;
      if (card.visible && card.stale) this.enqueue(card);
      else if (card.visible && card.viewStale) this.redrawCard(card);
    }
    this.pump();
  }

  redrawCard(card) {
    card.viewStale = false;
    return this.schedule(() => this.restyle(card));
  }

  async restyle(card) {
    try {
      const Plotly = await this.hooks.ready();
      await nextTask();
      if (card.plot.querySelector(".card-empty, .card-error")) return; // nothing drawn to restyle
      const figure = buildFigure(card.payload, this.hooks.view());
      await Plotly.react(card.plot, figure.data, figure.layout, PLOT_CONFIG);
    } catch (error) {
      this.showCardError(card, `This chart could not be drawn: ${error.message}`);
    }
  }

  enqueue(card) {
    if (card.queued) return;
    card.queued = true;
    this.queue.push(card);
  }

  pump() {
    while (this.active < PARALLEL_FETCHES && this.queue.length) {
      const card = this.queue.shift();
      this.active += 1;
      this.load(card, this.abort.signal).finally(() => {
        this.active -= 1;
        this.pump();
        this.checkCycle();
      });
    }
    this.checkCycle();
  }

  /** Run `draw` after every draw scheduled before it; the returned promise settles with it. */
  schedule(draw) {
    this.pendingDraws += 1;
    const done = this.drawing.then(draw);
    this.drawing = done.catch(() => {}).finally(() => {
      this.pendingDraws -= 1;
      this.checkCycle();
    });
    return done;
  }

  checkCycle() {
    if (!this.cycle || this.active || this.queue.length || this.pendingDraws) return;
    // Cards just added are not known to be on screen or off until the observer has reported them.
    if ([...this.cards.values()].some((c) => !c.observed || (c.visible && c.stale))) return;
    const cycle = this.cycle;
    this.cycle = null;
    cycle.finished = performance.now();
    cycle.visible = [...this.cards.values()].filter((c) => c.visible).length;
    this.hooks.onCycle(cycle);
  }

  async load(card, signal) {
    card.queued = false;
    if (!card.stale) return;
    card.stale = false;
    const url = this.hooks.aggregateUrl(card.tag);
    const first = !card.payload;
    card.node.classList.add("loading");
    if (first) card.status.textContent = "loading…";
    let text;
    try {
      text = await getText(url, signal);
    } catch (error) {
      card.node.classList.remove("loading");
      if (error.name === "AbortError") return;
      this.showCardError(card, error.message);
      return;
    }
    const arrived = performance.now();
    card.node.classList.remove("loading");
    // Settings changed while this was under way: the card is already queued for the new ones.
    if (signal.aborted || url !== this.hooks.aggregateUrl(card.tag)) return;
    const cycle = this.cycle;
    if (cycle && cycle.firstArrival === null) cycle.firstArrival = arrived;
    // Drawn in the chain, without holding this fetch's slot: the next answers are on their way while
    // this one waits for Plotly (whose start takes most of a second on a small machine) and is drawn.
    this.schedule(() => this.draw(card, { url, text, arrived, signal, cycle })).catch((error) =>
      this.showCardError(card, `This chart could not be drawn: ${error.message}`),
    );
  }

  /** Draw a fetched answer (in the draw chain: earlier answers are on screen already). */
  async draw(card, { url, text, arrived, signal, cycle }) {
    if (signal.aborted || url !== this.hooks.aggregateUrl(card.tag)) return;
    if (text === card.text && url === card.url && !card.viewStale) {
      if (cycle) cycle.unchanged += 1; // same bytes: nothing to redraw
      return;
    }
    let payload;
    try {
      payload = JSON.parse(text);
    } catch {
      this.showCardError(card, "The server sent an answer this page cannot read; try Reload.");
      return;
    }
    let Plotly;
    try {
      Plotly = await this.hooks.ready();
    } catch (error) {
      this.showCardError(card, error.message);
      return;
    }
    // A task of its own: the chart drawn just before can be painted first.
    await nextTask();
    if (signal.aborted || url !== this.hooks.aggregateUrl(card.tag)) return;
    card.url = url;
    card.text = text;
    card.payload = payload;
    card.viewStale = false;
    card.status.textContent = "";
    this.showNotes(card, payload);
    if (!payload.groups.some((g) => g.x.length)) {
      this.setImagesEnabled(card, false);
      Plotly.purge(card.plot);
      clear(card.plot).appendChild(
        el("div", { className: "card-empty", text: "No points left to draw with these settings." }),
      );
    } else {
      if (card.plot.querySelector(".card-empty, .card-error")) clear(card.plot);
      try {
        const figure = buildFigure(payload, this.hooks.view());
        await Plotly.react(card.plot, figure.data, figure.layout, PLOT_CONFIG);
      } catch (error) {
        this.showCardError(card, `This chart could not be drawn: ${error.message}`);
        return;
      }
      this.setImagesEnabled(card, true);
    }
    const drawn = performance.now();
    // What is on screen, for anyone checking the page (and the browser tests): the request drawn and how often.
    card.plot.dataset.url = url;
    card.plot.dataset.draws = String(Number(card.plot.dataset.draws || 0) + 1);
    performance.measure(`aggregate:draw:${card.tag}`, { start: arrived, end: drawn });
    if (cycle) {
      cycle.lastDrawn = drawn;
      cycle.drawn += 1;
    }
  }

  showCardError(card, message) {
    this.setImagesEnabled(card, false);
    card.status.textContent = "";
    card.text = null;
    if (window.Plotly) window.Plotly.purge(card.plot);
    clear(card.plot).appendChild(el("div", { className: "card-error", role: "alert", text: message }));
  }

  showNotes(card, payload) {
    clear(card.notes);
    const notes = [...payload.notes];
    for (const g of payload.groups) {
      if (g.runs.length < g.size) {
        notes.push(`${g.group}: ${g.size - g.runs.length} of ${g.size} runs have no ${payload.tag} data`);
      }
    }
    for (const note of notes) card.notes.appendChild(el("li", { text: note }));
    // How each group's curve was made (alignment, what was left out), folded away until asked for.
    const perGroup = payload.groups.flatMap((g) => (g.notes || []).map((note) => `${g.group}: ${note}`));
    if (perGroup.length) {
      card.notes.appendChild(
        el(
          "li",
          { className: "details-item" },
          el(
            "details",
            {},
            el("summary", { text: "How these curves were made" }),
            el("ul", {}, perGroup.map((note) => el("li", { text: note }))),
          ),
        ),
      );
    }
  }
}

/**
 * Resolve in a new task, so that the browser may paint what is drawn so far. A message rather than a
 * timer: timers of a tab in the background wait up to a second.
 */
function nextTask() {
  return new Promise((resolve) => {
    const channel = new MessageChannel();
    channel.port1.onmessage = () => {
      channel.port1.close();
      resolve();
    };
    channel.port2.postMessage(null);
  });
}
