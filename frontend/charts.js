// The cards: one per tag, in sections by tag prefix (`train/...`, `val/...`) like TensorBoard's
// scalars, each section one responsive grid of cards; tags without a prefix share one section, and
// tags are in natural order (metric_2 before metric_10). A card fetches and draws its chart only when
// it is (nearly) on screen, and a refresh that brings the same bytes back does not redraw it. On each
// card two groups can be chosen: the backend then says where along x they differ, drawn as a strip.
//
// Answers are drawn one at a time, each in a task of its own: answers that came while Plotly's script
// was still starting (most of a second on a small machine) were otherwise all drawn in one task once
// it was there, and none reached the screen before the last was drawn.

import { getText } from "./api.js";
import { clear, el, fileStem } from "./dom.js";
import { loadPlotly } from "./plotly_loader.js";
import { naturalCompare } from "./state.js";
import { buildFigure, exportFigure } from "./traces.js";

const NEAR_SCREEN_PX = 200; // cards this close to the screen are fetched, as the observer's margin says

/** Whether `node` is on screen or within NEAR_SCREEN_PX of it (the observer's own test, done now). */
function nearScreen(node) {
  const box = node.getBoundingClientRect();
  return box.width > 0 && box.bottom > -NEAR_SCREEN_PX && box.top < window.innerHeight + NEAR_SCREEN_PX;
}

// One Python process serves the charts: the first of a cycle is asked for alone (two at once take
// twice as long each, 1.0 s instead of 0.5 s for a chart of 2,000 runs), the rest two at a time (one
// is computed while the other travels or is drawn).
const PARALLEL_FETCHES = 2;
const PLOT_CONFIG = {
  displaylogo: false,
  responsive: true,
  modeBarButtonsToRemove: ["select2d", "lasso2d", "autoScale2d"],
};

/** The section of a tag: its part before the first "/"; "" (one section) for tags without one. */
function prefixOf(tag) {
  const slash = tag.indexOf("/");
  return slash > 0 ? tag.slice(0, slash) : "";
}

const NO_PREFIX = "(no prefix)"; // the name shown for the section of tags without a "/"
const NONE = ""; // the value of "no group" in a card's along-the-curve menus

/** "1,234": x counts as people read them. */
function thousands(n) {
  return Number(n).toLocaleString("en-US");
}

/** The line under a chart saying where two groups differ (the test named, never unadjusted). */
export function alongSentence(along) {
  return (
    `${along.a} vs ${along.b} differ at ${thousands(along.differ)} of ${thousands(along.tested)} x values ` +
    "(Welch per x, Benjamini-Hochberg q=0.05)"
  );
}

/**
 * The chart area. `hooks`:
 *   aggregateUrl(tag) -> URL of the /aggregate request for the current settings
 *   exportUrl(tag)    -> URL of the CSV export of that tag
 *   groups()          -> the groups' names, for the along-the-curve menus
 *   along(tag)        -> [group a, group b] compared along x on that card, or null
 *   onAlong(tag, pair) -> the user chose two groups ([a, b]) on a card, or none (null)
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
      rootMargin: `${NEAR_SCREEN_PX}px 0px`,
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
    const byPrefix = new Map(); // in the order of the sections' first tags
    for (const tag of [...tags].sort(naturalCompare)) {
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
        const name = el("span", { className: prefix ? "section-name" : "section-name muted", text: prefix || NO_PREFIX });
        const node = el(
          "details",
          { className: "tag-section", open: true, dataset: { prefix } },
          el("summary", {}, name, count),
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
    // Along the curve: two groups, and where they differ under the chart.
    const pick = (label) =>
      el("select", {
        className: "along-select",
        "aria-label": label,
        dataset: { role: label === "First group" ? "along-a" : "along-b" },
        on: { change: () => this.onAlongPick(card) },
      });
    card.alongA = pick("First group");
    card.alongB = pick("Second group");
    card.alongRow = el(
      "div",
      { className: "along-row", hidden: true },
      el("span", { className: "muted", text: "Where do" }),
      card.alongA,
      el("span", { className: "muted", text: "and" }),
      card.alongB,
      el("span", { className: "muted", text: "differ along x?" }),
    );
    card.alongText = el("div", { className: "along-text", hidden: true, "aria-live": "polite" });
    card.alongToggle = el("button", {
      type: "button",
      className: "button small",
      text: "A vs B",
      title: "Where two groups differ along x (Welch's test at each x, Benjamini-Hochberg adjusted)",
      "aria-expanded": "false",
      dataset: { role: "along" },
      on: { click: () => this.toggleAlong(card) },
    });
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
      el("header", {}, el("h3", { text: tag, title: tag }), status, card.alongToggle, csv, ...card.images),
      card.alongRow,
      plot,
      card.alongText,
      notes,
    );
    this.fillAlong(card);
    return card;
  }

  /** Show or hide a card's along-the-curve menus (hiding them clears the choice). */
  toggleAlong(card, open = card.alongRow.hidden) {
    card.alongRow.hidden = !open;
    if (open) this.fillAlong(card);
    card.alongToggle.setAttribute("aria-expanded", String(open));
    card.alongToggle.classList.toggle("active", open);
    if (!open && this.hooks.along(card.tag)) this.hooks.onAlong(card.tag, null);
    if (!open) {
      card.alongA.value = NONE;
      card.alongB.value = NONE;
    }
  }

  onAlongPick(card) {
    const a = card.alongA.value;
    const b = card.alongB.value;
    const pair = a && b && a !== b ? [a, b] : null;
    const before = this.hooks.along(card.tag);
    if (pair || before) this.hooks.onAlong(card.tag, pair);
  }

  /**
   * The card's along menus: every group, and the choice the settings hold. Filled only once opened
   * (or chosen in the URL): with many groups and many tags, closed menus cost nothing.
   */
  fillAlong(card) {
    const chosen = this.hooks.along(card.tag);
    if (!chosen && card.alongRow.hidden) return;
    const groups = this.hooks.groups();
    for (const [node, i] of [[card.alongA, 0], [card.alongB, 1]]) {
      const entries = [[NONE, "—"], ...groups.map((g) => [g, g])];
      const key = JSON.stringify(entries);
      if (node.dataset.entries !== key) {
        clear(node);
        for (const [value, text] of entries) node.appendChild(el("option", { value, text }));
        node.dataset.entries = key;
      }
      const want = chosen ? chosen[i] : node.value;
      node.value = groups.includes(want) ? want : NONE;
    }
    if (chosen && card.alongRow.hidden) this.toggleAlong(card, true);
  }

  /** New groups or new choices (the hash changed): the menus of every card, and the cards to fetch again. */
  syncAlong() {
    for (const card of this.cards.values()) {
      this.fillAlong(card);
      if (card.url !== null && card.url !== this.hooks.aggregateUrl(card.tag)) {
        card.stale = true;
        if (card.visible) this.enqueue(card);
      }
    }
    this.pump();
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
    this.firstPending = true;
    for (const card of this.cards.values()) {
      card.stale = true;
      card.csv.href = this.hooks.exportUrl(card.tag);
      // A card the observer has not reported yet (just made): the layout says now whether it is on
      // screen, so the first requests leave at once rather than after the next frame, which a busy
      // page (Plotly's script being run) can hold back by most of a second.
      if (!card.observed) card.visible = nearScreen(card.node);
      if (card.visible) this.enqueue(card);
    }
    this.pump();
  }

  /** Ask again for the charts whose last request failed (visible ones now, others when shown). */
  retryFailed() {
    for (const card of this.cards.values()) {
      if (!card.failed) continue;
      card.stale = true;
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
    while (this.active < (this.firstPending ? 1 : PARALLEL_FETCHES) && this.queue.length) {
      const card = this.queue.shift();
      this.active += 1;
      this.load(card, this.abort.signal).finally(() => {
        this.firstPending = false;
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
    card.failed = false;
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
    this.showAlong(card, payload.along);
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

  showAlong(card, along) {
    card.alongText.hidden = !along;
    card.alongText.textContent = along ? alongSentence(along) : "";
    card.alongText.classList.toggle("differ", Boolean(along && along.differ));
  }

  showCardError(card, message) {
    card.failed = true;
    this.showAlong(card, null);
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
