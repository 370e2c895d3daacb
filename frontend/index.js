// The Aggregate tab. TensorBoard loads this module into an iframe and calls render().
//
// One direction: settings (URL hash) -> requests to the plugin's routes -> drawing. The backend does
// every computation; this module only asks, draws and explains.

import { getJSON, getText, RequestError, routeUrl } from "./api.js";
import { ChartGrid } from "./charts.js";
import { Compare } from "./compare.js";
import { clear, el } from "./dom.js";
import { LazySection } from "./lazy.js";
import { Panel } from "./panel.js";
import { loadPlotly } from "./plotly_loader.js";
import {
  alongChoices,
  defaultsOf,
  ENGINE_OPTIONS,
  engineParams,
  hashHasState,
  hashWindow,
  isComplete,
  optionLabel,
  readState,
  SETTINGS,
  withAlong,
  withDefaults,
  writeState,
  xLabel,
} from "./state.js";
import { Summary } from "./summary.js";
import { chartTheme, followTheme } from "./theme.js";
import { colorFor } from "./traces.js";

const POLL_MS = 30000; // TensorBoard's own reload interval
const MIN_GAP_MS = 3000; // a reload message right after a refresh is not worth another one
const SKIPPED_SHOWN = 20; // unreadable folders named in the empty state
const COMPARE_SETTINGS = ["compare_tag", "score", "baseline"]; // what the Compare section's request holds

/** Entry point called by TensorBoard. */
export async function render() {
  if (window.__aggregateTab) return;
  const app = new App(document.body);
  window.__aggregateTab = app;
  try {
    app.start();
  } catch (error) {
    // Never a blank tab: say what happened in plain words.
    document.body.textContent = `The Aggregate tab could not start: ${error.message}`;
  }
}

class App {
  constructor(body) {
    this.body = body;
    // The hash's settings; the engine options it does not hold come with the first /runs answer.
    this.state = readState();
    this.options = null; // the backend's options: every engine default and menu (from /runs)
    this.gen = 0;
    this.listing = null;
    this.listingText = null;
    this.summaryText = null;
    this.compareText = null;
    this.colors = new Map();
    this.lastRefresh = 0;
    this.abort = null;
    this.cycles = []; // timings of finished draws, for measuring
  }

  start() {
    document.documentElement.dataset.aggregateCycles = "0";
    const styled = addStyles();
    followTheme(() => this.grid.redraw()); // the page's colors change by CSS; the charts are redrawn
    loadPlotly().catch((error) => this.showBanner(error.message)); // in parallel with the first data
    // Charts wait for the styles too, whose colors they take (and try Plotly again should it have failed).
    this.chartsReady = () => Promise.all([loadPlotly(), styled]).then(([Plotly]) => Plotly);
    this.buildLayout();
    this.panel.render(this.state);
    this.refresh("options");
    connectToTensorBoard(() => this.onReloadSignal());
    setInterval(() => {
      if (performance.now() - this.lastRefresh > POLL_MS - 5000) this.poll();
    }, POLL_MS);
    // Back on this tab after a poll was skipped: catch up at once.
    new IntersectionObserver((entries) => {
      if (entries.some((e) => e.isIntersecting) && this.missedPoll) this.poll();
    }).observe(this.main);
    const win = hashWindow();
    win.addEventListener("hashchange", () => this.onHashChange());
  }

  buildLayout() {
    const panelRoot = el("aside", { className: "panel", "aria-label": "Settings" });
    this.panel = new Panel(panelRoot, (patch) => this.update(patch));
    this.legend = el("div", { className: "legend", "aria-label": "Groups" });
    this.status = el("span", { className: "status", "aria-live": "polite" });
    this.reloadButton = el("button", {
      type: "button",
      className: "button",
      text: "Reload",
      title: "Fetch new data now (the tab also checks every 30 s)",
      on: { click: () => this.refresh("reload") },
    });
    this.downloadAll = el("a", {
      className: "button primary",
      text: "Download all (CSV)",
      download: "",
      title: "Every tag shown, every point, with the current settings",
      dataset: { role: "download-all" },
    });
    this.banner = el("div", { className: "banner", role: "alert", hidden: true });
    this.message = el("div", { className: "message", hidden: true });
    const chartsRoot = el("div", { className: "charts" });
    // Under the charts: the Compare section, then the summary; each fetched only while on screen.
    const compareRoot = el("section", { className: "summary compare-section", hidden: true, "aria-label": "Compare" });
    const summaryRoot = el("section", { className: "summary summary-section", hidden: true, "aria-label": "Summary" });
    this.compareRoot = compareRoot;
    this.summaryRoot = summaryRoot;
    this.main = el(
      "main",
      { className: "main" },
      el("div", { className: "toolbar" }, this.legend, el("span", { className: "spacer" }), this.status, this.reloadButton, this.downloadAll),
      this.banner,
      this.message,
      chartsRoot,
      compareRoot,
      summaryRoot,
    );
    this.grid = new ChartGrid(chartsRoot, {
      aggregateUrl: (tag) => {
        const pair = this.alongPair(tag);
        return routeUrl(
          "aggregate",
          engineParams(this.state, {
            tag,
            include_runs: this.state.show_runs ? 1 : "",
            compare_a: pair ? pair[0] : "",
            compare_b: pair ? pair[1] : "",
          }),
        );
      },
      exportUrl: (tag) => routeUrl("export", engineParams(this.state, { format: "csv", tag })),
      groups: () => (this.listing ? Object.keys(this.listing.groups) : []),
      along: (tag) => this.alongPair(tag),
      onAlong: (tag, pair) => this.update({ along: withAlong(this.state, tag, pair) }),
      view: () => ({
        colors: this.colors,
        logY: this.state.log_y,
        showRuns: this.state.show_runs,
        uirevision: `${this.state.x}|${this.state.log_y}`,
        xTitle: xLabel(this.options, this.state.x),
        theme: chartTheme(),
      }),
      ready: () => this.chartsReady(),
      onCycle: (cycle) => this.onCycle(cycle),
    });
    this.summary = new Summary(summaryRoot, {
      textUrl: (format) => routeUrl("summary", engineParams(this.state, { format })),
      getText: (url) => getText(url),
    });
    this.compare = new Compare(compareRoot, {
      onChange: (patch) => this.update(patch),
      csvUrl: (table) => this.compareUrl({ format: "csv", table }),
      textUrl: (format) => this.compareUrl({ format }),
      getText: (url) => getText(url),
    });
    this.summaryLazy = new LazySection(summaryRoot, () => this.refreshSummary());
    this.compareLazy = new LazySection(compareRoot, () => this.refreshCompare());
    clear(this.body).appendChild(el("div", { className: "app" }, panelRoot, this.main));
  }

  /** The two groups compared along x on the card of `tag`, when both are groups of the listing. */
  alongPair(tag) {
    const pair = alongChoices(this.state)[tag];
    if (!pair || !this.listing || pair[0] === pair[1]) return null;
    return pair.every((g) => Object.hasOwn(this.listing.groups, g)) ? pair : null;
  }

  /** The /compare URL for the current settings and the Compare section's choices, plus `extra`. */
  compareUrl(extra = {}) {
    const choice = Compare.choices(this.state, this.listing || {});
    return routeUrl(
      "compare",
      engineParams(this.state, { tag: choice.tag, score: choice.score, baseline: choice.baseline, ...extra }),
    );
  }

  /** Every setting's default: the backend's for the engine options (once known), the view's own. */
  defaults() {
    return defaultsOf(this.options);
  }

  /** The user changed some settings: store them in the URL, then fetch and draw what they affect. */
  update(patch) {
    const before = this.state;
    this.state = { ...before, ...patch };
    writeState(this.state, this.defaults());
    const changed = Object.keys(patch).filter((key) => patch[key] !== before[key]);
    if (!changed.length) return;
    if (changed.some((key) => ENGINE_OPTIONS.includes(key))) {
      this.refresh("options");
      return;
    }
    if (changed.includes("show_runs")) this.refresh("runs-shown");
    else if (changed.includes("log_y")) this.grid.redraw();
    if (changed.includes("along")) this.grid.syncAlong();
    if (changed.some((key) => COMPARE_SETTINGS.includes(key)) && this.listing) {
      this.compare.setChoices(this.listing, this.options, Compare.choices(this.state, this.listing));
      this.compareLazy.invalidate();
    }
  }

  onHashChange() {
    if (!hashHasState()) {
      // TensorBoard rewrote its hash (e.g. coming back to this tab): put our settings back.
      writeState(this.state, this.defaults());
      return;
    }
    // What the hash says, and the defaults for what it leaves out (before they are known: nothing).
    const next = this.options ? withDefaults(readState(), this.options) : readState();
    const patch = {};
    for (const key of SETTINGS) if (next[key] !== this.state[key]) patch[key] = next[key];
    if (!Object.keys(patch).length) return;
    this.panel.render({ ...this.state, ...patch });
    this.update(patch);
  }

  onReloadSignal() {
    if (performance.now() - this.lastRefresh > MIN_GAP_MS) this.poll();
  }

  /** Check for new data, unless nobody can see the tab (another TensorBoard tab or browser tab is shown). */
  poll() {
    const frame = window.frameElement;
    const hidden = document.hidden || (frame !== null && frame.offsetParent === null);
    this.missedPoll = hidden;
    // A refresh under way already brings the newest data; a poll must not cancel it.
    if (!hidden && !this.refreshing) this.refresh("poll");
  }

  /**
   * Fetch the run listing, then the charts and the summary.
   * kind: "options" (new settings), "runs-shown" (individual runs toggled), "reload" (button),
   * "poll" (timer or TensorBoard's reload: quiet, and nothing is redrawn when nothing changed).
   */
  async refresh(kind) {
    this.refreshing = (this.refreshing || 0) + 1;
    try {
      await this.fetchAndDraw(kind);
    } finally {
      this.refreshing -= 1;
    }
  }

  async fetchAndDraw(kind) {
    const gen = ++this.gen;
    const fresh = kind === "options" || kind === "runs-shown";
    if (this.abort) this.abort.abort();
    this.abort = new AbortController();
    const signal = this.abort.signal;
    this.lastRefresh = performance.now();
    if (kind !== "poll") this.setBusy(true);
    if (!this.listing) this.showMessage("Loading runs…", true);
    let text;
    let listing;
    try {
      // The Reload button asks for the data server's newest listing, even one a second old.
      const extra = kind === "reload" ? { fresh: 1 } : {};
      ({ text, data: listing } = await getJSON(routeUrl("runs", engineParams(this.state, extra)), signal));
    } catch (error) {
      if (error.name === "AbortError") return;
      if (gen === this.gen) {
        this.showRequestError(error, kind);
        // Settings the backend refuses, before it has said what is allowed: ask it with none of them,
        // so the menus can offer the values that are (and the control at fault be set right).
        if (!this.options && error instanceof RequestError && error.status === 400) this.fetchOptions(signal);
      }
      return;
    }
    if (gen !== this.gen) return;
    this.listingArrived = performance.now();
    this.clearErrors();
    this.takeOptions(listing.options);
    // The listing names the version of the data: on a poll that finds it unchanged, every chart and
    // table shown is current, and nothing is asked again (but a chart that failed is).
    if (kind === "poll" && text === this.listingText) {
      this.grid.retryFailed();
      return;
    }
    const newListing = text !== this.listingText;
    if (newListing) {
      this.listingText = text;
      this.listing = listing;
      this.colors = new Map(Object.keys(listing.groups).map((g, i) => [g, colorFor(i)]));
      this.grid.syncAlong(); // the groups of the cards' along menus
    }
    this.renderLegend();
    const empty = emptyState(listing, this.state);
    this.downloadAll.href = routeUrl("export", engineParams(this.state, { format: "csv" }));
    this.downloadAll.toggleAttribute("hidden", Boolean(empty));
    if (empty) {
      if (newListing) this.panel.setListing(listing, this.colors, this.state);
      this.grid.setTags([]);
      this.summaryRoot.hidden = true;
      this.compareRoot.hidden = true;
      this.showMessage(empty, false);
      this.setBusy(false);
      return;
    }
    this.showMessage(null);
    this.grid.setTags(listing.tags);
    this.grid.refresh({ fresh });
    // The side panel's list of runs (2,000 of them take a while to build) after the charts are asked for.
    if (newListing) this.panel.setListing(listing, this.colors, this.state);
    this.summaryRoot.hidden = false;
    this.compareRoot.hidden = false;
    this.compare.setChoices(listing, this.options, Compare.choices(this.state, listing));
    // Asked for now only when on screen; else once scrolled to (never on a poll while off-screen).
    await Promise.all([this.summaryLazy.invalidate(), this.compareLazy.invalidate()]);
    if (gen === this.gen) this.setBusy(false);
  }

  /**
   * The backend's options arrived (every /runs answer carries them): the first time, the engine
   * options the hash left out take their served defaults and the menus are built.
   */
  takeOptions(options) {
    if (!options || this.options) return;
    this.options = options;
    this.panel.setOptions(options);
    this.state = withDefaults(this.state, options);
    writeState(this.state, this.defaults()); // a hash value equal to its default is left out
    this.panel.render(this.state);
  }

  /** Only the options (after a first /runs refused the settings of the hash). */
  async fetchOptions(signal) {
    try {
      const { data } = await getJSON(routeUrl("runs"), signal);
      if (!this.options) {
        this.takeOptions(data.options); // the refused value stays, shown in its control with the error
      }
    } catch {
      // The next refresh (poll, reload, any change) asks again.
    }
  }

  /** Fetch and draw the summary (called by its LazySection, only while it is on screen). */
  async refreshSummary() {
    if (!this.listing || !isComplete(this.state)) return;
    const gen = this.gen;
    const seq = (this.summarySeq = (this.summarySeq || 0) + 1); // only the latest request may draw
    let result;
    try {
      result = await getJSON(routeUrl("summary", engineParams(this.state)), this.abort.signal);
    } catch (error) {
      if (error.name === "AbortError" || gen !== this.gen || seq !== this.summarySeq) return;
      this.summaryText = null;
      this.summary.showMessage(`The summary could not be computed: ${error.message}`, true);
      return;
    }
    if (gen !== this.gen || seq !== this.summarySeq) return;
    const key = `${result.text}|${this.listingText}|${this.state.band}|${this.state.center}`;
    if (key === this.summaryText) return; // the same numbers: nothing to redraw
    this.summaryText = key;
    this.summary.render(result.data, this.state, this.colors, this.options);
  }

  /** Fetch and draw the comparison (called by its LazySection, only while it is on screen). */
  async refreshCompare() {
    if (!this.listing || !isComplete(this.state) || !this.options) return;
    const gen = this.gen;
    const seq = (this.compareSeq = (this.compareSeq || 0) + 1);
    const url = this.compareUrl();
    if (this.compareText === null) this.compare.showMessage("Comparing…");
    let result;
    try {
      result = await getJSON(url, this.abort.signal);
    } catch (error) {
      if (error.name === "AbortError" || gen !== this.gen || seq !== this.compareSeq) return;
      this.compareText = null;
      this.compare.showMessage(`These groups cannot be compared: ${error.message}`, true);
      return;
    }
    if (gen !== this.gen || seq !== this.compareSeq) return;
    const key = `${result.text}|${this.listingText}`;
    if (key === this.compareText) return;
    this.compareText = key;
    this.compare.render(result.data, this.colors);
  }

  onCycle(cycle) {
    const timing = {
      listingToDrawnMs: cycle.lastDrawn === null ? null : cycle.lastDrawn - this.listingArrived,
      arrivalToDrawnMs:
        cycle.lastDrawn === null || cycle.firstArrival === null ? null : cycle.lastDrawn - cycle.firstArrival,
      drawn: cycle.drawn,
      unchanged: cycle.unchanged,
      visible: cycle.visible,
    };
    if (cycle.lastDrawn !== null && cycle.firstArrival !== null) {
      performance.measure("aggregate:arrival-to-all-visible-drawn", { start: cycle.firstArrival, end: cycle.lastDrawn });
    }
    this.cycles.push(timing);
    document.documentElement.dataset.aggregateCycles = String(this.cycles.length);
  }

  renderLegend() {
    clear(this.legend);
    for (const [group, runs] of Object.entries(this.listing.groups)) {
      const swatch = el("span", { className: "swatch" });
      swatch.style.background = this.colors.get(group);
      this.legend.appendChild(
        el("span", { className: "legend-item", title: `${runs.length} runs` }, swatch, group, el("span", { className: "muted count", text: String(runs.length) })),
      );
    }
    this.legend.appendChild(
      el("span", {
        className: "legend-key muted",
        text:
          `line: ${optionLabel(this.options, "center", this.state.center)} · ` +
          `band: ${optionLabel(this.options, "band", this.state.band)} · dashed: fewer runs than the group`,
      }),
    );
  }

  setBusy(busy) {
    this.main.classList.toggle("busy", busy);
    clear(this.status);
    if (busy) this.status.appendChild(el("span", { className: "spinner", "aria-label": "Loading" }));
  }

  /** The message where the charts would be: a text, or nodes (an empty state that explains itself). */
  showMessage(content, spinner = false) {
    clear(this.message);
    this.message.hidden = !content;
    if (!content) return;
    if (spinner) this.message.appendChild(el("span", { className: "spinner" }));
    this.message.appendChild(
      typeof content === "string" ? el("span", { text: content }) : el("div", { className: "message-body" }, content),
    );
  }

  showBanner(text) {
    this.banner.hidden = !text;
    this.banner.textContent = text || "";
  }

  clearErrors() {
    this.showBanner(null);
    this.panel.setError(null, "");
  }

  /** A failed /runs request: say what is wrong in plain words, next to the control when it names one. */
  showRequestError(error, kind) {
    this.setBusy(false);
    if (error instanceof RequestError && error.status === 400) {
      this.panel.setError(error.option, error.message);
      this.showBanner(`These settings cannot be drawn: ${error.message}`);
      this.downloadAll.hidden = true;
      this.grid.setTags([]);
      this.summaryRoot.hidden = true;
      this.compareRoot.hidden = true;
      this.showMessage(null);
      this.listingText = null;
      return;
    }
    // Lost connection or a server error: keep what is drawn (it is still right for these settings).
    this.showBanner(kind === "poll" ? `Could not check for new data: ${error.message}` : error.message);
    if (!this.listing) this.showMessage(null);
  }
}

/**
 * Why nothing can be drawn, as nodes for the message (null when there is something to draw). With no
 * data at all, the folders TensorBoard could not read are named with the reason (`skipped`).
 */
function emptyState(listing, state) {
  const reason = emptyReason(listing, state);
  if (!reason) return null;
  const parts = [el("p", { text: reason })];
  const skipped = Object.entries(listing.skipped || {});
  if (skipped.length && (!listing.total_runs || (!listing.tags.length && !state.tags))) {
    parts.push(el("p", { text: skipped.length === 1 ? "This could not be read:" : "These could not be read:" }));
    const items = skipped.slice(0, SKIPPED_SHOWN).map(([run, why]) =>
      el("li", { dataset: { run } }, el("span", { className: "skipped-run", text: run || "(the log directory itself)" }), `: ${why}`),
    );
    if (skipped.length > SKIPPED_SHOWN) items.push(el("li", { text: `… and ${skipped.length - SKIPPED_SHOWN} more` }));
    parts.push(el("ul", { className: "skipped" }, items));
    if (!listing.total_runs && skipped.some(([, why]) => why.includes("folder cannot be read"))) {
      parts.push(
        el("p", {
          className: "muted small",
          text:
            "A folder TensorBoard may not read is left out; with --load_fast=false it stops TensorBoard's " +
            "loader for the whole log directory. Make it readable by the user running TensorBoard, or " +
            "move it out of the log directory: the runs show at TensorBoard's next reload.",
        }),
      );
    }
  }
  return parts;
}

function emptyReason(listing, state) {
  if (!listing.total_runs) {
    return Object.keys(listing.skipped || {}).length
      ? "No scalar data: TensorBoard loaded no run from this log directory."
      : "No scalar data: this log directory has no runs with scalar summaries yet.";
  }
  if (!listing.runs.length) return `No run matches the run filter ${JSON.stringify(state.runs)}.`;
  if (!Object.keys(listing.groups).length) {
    return `No run could be placed in a group with group by ${JSON.stringify(state.group_by)}.`;
  }
  if (!listing.tags.length) {
    return state.tags
      ? `No scalar tag matches the tag filter ${JSON.stringify(state.tags)}.`
      : "No scalar data in the matching runs.";
  }
  return null;
}

/** Add the tab's stylesheet (and TensorBoard's font); resolves once the stylesheet is in (or failed). */
function addStyles() {
  document.head.appendChild(el("meta", { name: "viewport", content: "width=device-width, initial-scale=1" }));
  const link = el("link", { rel: "stylesheet", href: new URL("./style.css", import.meta.url).href });
  const loaded = new Promise((resolve) => {
    link.addEventListener("load", resolve);
    link.addEventListener("error", resolve); // drawn in the charts' fallback colors rather than never
  });
  document.head.appendChild(link);
  // Use TensorBoard's own Roboto: copy its @font-face rules from the page around us (same origin).
  try {
    const rules = [];
    for (const sheet of window.parent.document.styleSheets) {
      let list;
      try {
        list = sheet.cssRules;
      } catch {
        continue;
      }
      for (const rule of list) {
        if (rule instanceof window.parent.CSSFontFaceRule && /roboto/i.test(rule.style.getPropertyValue("font-family"))) {
          const base = sheet.href || window.parent.document.baseURI;
          rules.push(rule.cssText.replace(/url\(["']?([^"')]+)["']?\)/g, (_, u) => `url("${new URL(u, base).href}")`));
        }
      }
    }
    if (rules.length && window.parent !== window) document.head.appendChild(el("style", { text: rules.join("\n") }));
  } catch {
    // Not inside TensorBoard, or its page cannot be read: the system font is used.
  }
  return loaded;
}

/**
 * TensorBoard's plugin host answers an "experimental.bootstrap" message with a channel on which it
 * announces each data reload; listen to it so new data shows at TensorBoard's pace.
 */
function connectToTensorBoard(onReload) {
  if (window.parent === window) return;
  try {
    const channel = new MessageChannel();
    channel.port1.onmessage = (event) => {
      let message;
      try {
        message = JSON.parse(event.data);
      } catch {
        return;
      }
      if (!message || message.isReply) return;
      if (message.type === "experimental.DataReloaded") onReload();
      channel.port1.postMessage(
        JSON.stringify({ type: message.type, id: message.id, payload: null, error: null, isReply: true }),
      );
    };
    window.parent.postMessage("experimental.bootstrap", window.location.origin, [channel.port2]);
  } catch {
    // Without the channel the 30 s poll still brings new data.
  }
}
