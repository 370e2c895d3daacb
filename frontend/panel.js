// The side panel: every control of the tab, and the runs that match, listed under their group so the
// user sees which runs were put together before reading any curve.

import { clear, debounce, el } from "./dom.js";

// The tab's words for the grouping modes. Which modes there are is the backend's to say (its
// group_by values: auto, parent, none, regex:PATTERN, hparam:NAME[,NAME...]), which come without labels.
const GROUP_MODE_LABELS = {
  auto: "auto (name without seed / run index)",
  parent: "parent folder",
  regex: "regex capture",
  hparam: "hparams",
  none: "none (one group)",
};
const TEXT_DELAY_MS = 500;
const RUNS_SHOWN_PER_GROUP = 100;

function parseGroupBy(value) {
  const text = typeof value === "string" ? value : "";
  if (text.startsWith("regex:")) return { mode: "regex", pattern: text.slice(6), names: [] };
  if (text.startsWith("hparam:")) {
    return { mode: "hparam", pattern: "", names: text.slice(7).split(",").filter(Boolean) };
  }
  return { mode: text, pattern: "", names: [] };
}

function select(name, label) {
  return el("select", { name, "aria-label": label, className: "control-select" });
}

/** Replace the entries of `node` with `entries` ([value, label] pairs) and show `chosen`. */
function fillSelect(node, entries, chosen) {
  const current = JSON.stringify(entries);
  if (node.dataset.entries !== current) {
    clear(node);
    for (const [value, text] of entries) node.appendChild(el("option", { value, text }));
    node.dataset.entries = current;
  }
  node.value = chosen === undefined ? "" : String(chosen);
}

/** The grouping modes the backend takes, as `[mode, label]` pairs (`regex:PATTERN` is mode regex). */
function groupModes(options) {
  const values = options && options.group_by && options.group_by.values;
  if (!Array.isArray(values)) return [];
  const modes = [...new Set(values.map((value) => String(value).split(":")[0]))];
  return modes.map((mode) => [mode, GROUP_MODE_LABELS[mode] || mode]);
}

/** The `[value, label]` pairs the backend serves for the menu option `key`. */
function servedValues(options, key) {
  const values = options && options[key] && options[key].values;
  return Array.isArray(values) ? values.filter(Array.isArray).map(([value, text]) => [String(value), String(text)]) : [];
}

/**
 * The side panel. It keeps no settings of its own: `render(state)` shows a state in the controls,
 * and `onChange(patch)` receives the settings the user changed. The menus of engine options are built
 * from the backend's `options` (`setOptions`), the run list and the hparams from the listing.
 */
export class Panel {
  constructor(root, onChange) {
    this.onChange = onChange;
    this.errors = new Map(); // option -> element showing its error
    this.options = null; // the backend's options: defaults and menu values (not settings)
    this.tags = []; // the listing's scalar tags, for the X axis menu
    this.listedHparams = []; // the listing's hparam names, for the hparam checkboxes
    root.appendChild(this.build());
  }

  build() {
    const panel = el("div", { className: "panel-inner" });

    // Runs: regex filter and the matching runs under their group.
    this.runsInput = this.textInput("runs", "Filter runs (regex)", "e.g. lr=0\\.0[13]");
    this.runsSummary = el("div", { className: "muted small", "aria-live": "polite" });
    this.runList = el("div", { className: "run-list" });
    panel.appendChild(
      this.section("Runs", this.runsInput, this.errorSlot("runs"), this.runsSummary, this.runList),
    );

    // Grouping. The mode menu and the pattern box may hold a choice not sent yet (regex mode before a
    // pattern is typed, hparam mode before one is ticked): the controls themselves hold it.
    this.groupSelect = select("group_mode", "Group runs by");
    this.groupSelect.addEventListener("change", () => {
      this.showGroupDetails(this.groupSelect.value);
      this.emitGroupBy();
    });
    this.groupPattern = el("input", {
      type: "text",
      name: "group_regex",
      className: "control-text",
      placeholder: "capture group, e.g. (lr=[^/]+)",
      spellcheck: "false",
      "aria-label": "Grouping regex",
    });
    const patternChanged = debounce(() => this.emitGroupBy(), TEXT_DELAY_MS);
    this.groupPattern.addEventListener("input", () => patternChanged());
    this.groupPattern.addEventListener("keydown", (e) => e.key === "Enter" && patternChanged.flush());
    this.groupHint = el("div", { className: "muted small" });
    this.hparamBox = el("div", { className: "hparam-list" });
    panel.appendChild(
      this.section(
        "Group by",
        this.groupSelect,
        this.groupPattern,
        this.hparamBox,
        this.groupHint,
        this.errorSlot("group_by"),
      ),
    );

    // Tags.
    this.tagsInput = this.textInput("tags", "Filter tags (regex)", "e.g. loss");
    panel.appendChild(this.section("Tags", this.tagsInput, this.errorSlot("tags")));

    // Statistics.
    this.centerSelect = select("center", "Center line");
    this.centerSelect.addEventListener("change", () => this.onChange({ center: this.centerSelect.value }));
    this.bandSelect = select("band", "Band");
    this.bandSelect.addEventListener("change", () => this.onChange({ band: this.bandSelect.value }));
    this.minRuns = el("input", {
      type: "number",
      name: "min_runs",
      min: "1",
      step: "1",
      className: "control-number",
      "aria-label": "Minimum runs per point",
    });
    this.minRuns.addEventListener("change", () => {
      const value = Number(this.minRuns.value);
      this.onChange({ min_runs: Number.isInteger(value) && value >= 1 ? value : this.minRuns.value });
    });
    panel.appendChild(
      this.section(
        "Statistics",
        this.row("Line", this.centerSelect),
        this.errorSlot("center"),
        this.row("Band", this.bandSelect),
        this.errorSlot("band"),
        this.row("Min runs per point", this.minRuns),
        this.errorSlot("min_runs"),
      ),
    );

    // Chart.
    this.smoothRange = el("input", {
      type: "range",
      name: "smoothing_range",
      min: "0",
      max: "0.99",
      step: "0.01",
      className: "control-range",
      "aria-label": "Smoothing",
    });
    this.smoothNumber = el("input", {
      type: "number",
      name: "smoothing",
      min: "0",
      max: "0.99",
      step: "0.01",
      className: "control-number narrow",
      "aria-label": "Smoothing value",
    });
    const smoothingChanged = debounce((value) => this.onChange({ smoothing: value }), 250);
    this.smoothRange.addEventListener("input", () => {
      this.smoothNumber.value = this.smoothRange.value;
      smoothingChanged(Number(this.smoothRange.value));
    });
    this.smoothRange.addEventListener("change", () => smoothingChanged.flush(Number(this.smoothRange.value)));
    this.smoothNumber.addEventListener("change", () => {
      const value = Number(this.smoothNumber.value);
      if (Number.isFinite(value) && value >= 0 && value < 1) this.smoothRange.value = String(value);
      smoothingChanged.flush(Number.isFinite(value) ? value : this.smoothNumber.value);
    });
    this.xSelect = select("x", "Horizontal axis");
    this.xSelect.addEventListener("change", () => this.onChange({ x: this.xSelect.value }));
    this.logY = this.checkbox("log_y", "Log-scale y axis");
    this.showRuns = this.checkbox("show_runs", "Show individual runs");
    panel.appendChild(
      this.section(
        "Chart",
        this.row("Smoothing", this.smoothRange, this.smoothNumber),
        this.errorSlot("smoothing"),
        el("div", { className: "muted small", text: "Per run, before reducing (TensorBoard's formula)." }),
        this.row("X axis", this.xSelect),
        this.errorSlot("x"),
        this.logY.label,
        this.showRuns.label,
      ),
    );
    return panel;
  }

  section(title, ...children) {
    return el("section", { className: "panel-section" }, el("h2", { text: title }), ...children);
  }

  row(label, ...controls) {
    return el("div", { className: "control-row" }, el("span", { className: "control-label", text: label }), ...controls);
  }

  errorSlot(option) {
    const slot = el("div", { className: "field-error", role: "alert", hidden: true, dataset: { option } });
    this.errors.set(option, slot);
    return slot;
  }

  textInput(option, label, placeholder) {
    const input = el("input", {
      type: "text",
      name: option,
      className: "control-text",
      placeholder,
      spellcheck: "false",
      autocomplete: "off",
      "aria-label": label,
    });
    const changed = debounce(() => this.onChange({ [option]: input.value }), TEXT_DELAY_MS);
    input.addEventListener("input", () => changed());
    input.addEventListener("keydown", (e) => e.key === "Enter" && changed.flush());
    return input;
  }

  checkbox(option, text) {
    const input = el("input", {
      type: "checkbox",
      name: option,
      on: { change: () => this.onChange({ [option]: input.checked }) },
    });
    return { input, label: el("label", { className: "checkbox" }, input, text) };
  }

  /** The hparams ticked, in the order they are listed (so the group names do not jump around). */
  checkedHparams() {
    return [...this.hparamBox.querySelectorAll("input[name=hparam]")].filter((i) => i.checked).map((i) => i.value);
  }

  /** Send the grouping the controls describe, or say what it still lacks. */
  emitGroupBy() {
    const mode = this.groupSelect.value;
    let value = mode;
    let hint = "";
    if (mode === "regex") {
      hint = "The first capture group (or the whole match) names the group; runs that do not match are left out.";
      if (!this.groupPattern.value) {
        this.groupHint.textContent = "Type a regular expression with a capture group, e.g. (lr=[^/]+)";
        return;
      }
      value = `regex:${this.groupPattern.value}`;
    } else if (mode === "hparam") {
      const names = this.checkedHparams();
      if (!names.length) {
        this.groupHint.textContent = this.hparamBox.querySelector("input[name=hparam]")
          ? "Choose one or more hparams."
          : "No hparams were found in these runs.";
        return;
      }
      value = `hparam:${names.join(",")}`;
    }
    this.groupHint.textContent = hint;
    this.onChange({ group_by: value });
  }

  showGroupDetails(mode) {
    this.groupPattern.hidden = mode !== "regex";
    this.hparamBox.hidden = mode !== "hparam";
    if (mode !== "regex" && mode !== "hparam") this.groupHint.textContent = "";
  }

  /** The hparam checkboxes: the listing's hparams and any named in `groupBy`, those named ticked. */
  renderHparams(hparams, groupBy) {
    const chosen = parseGroupBy(groupBy).names;
    clear(this.hparamBox);
    const names = [...new Set([...hparams, ...chosen])];
    for (const name of names) {
      const input = el("input", { type: "checkbox", name: "hparam", value: name, checked: chosen.includes(name) });
      input.addEventListener("change", () => this.emitGroupBy());
      this.hparamBox.appendChild(el("label", { className: "checkbox" }, input, name));
    }
    if (!names.length) this.hparamBox.appendChild(el("div", { className: "muted small", text: "No hparams found." }));
  }

  /** The backend's `options`: the menus of engine options offer their values and labels from now on. */
  setOptions(options) {
    this.options = options;
  }

  /** The X axis menu: the served axes, then one entry per scalar tag (and the chosen value, always). */
  fillX(x) {
    const entries = [...servedValues(this.options, "x"), ...this.tags.map((tag) => [`tag:${tag}`, `tag: ${tag}`])];
    if (typeof x === "string" && x && !entries.some(([value]) => value === x)) {
      entries.push([x, x.startsWith("tag:") ? `tag: ${x.slice(4)}` : x]);
    }
    fillSelect(this.xSelect, entries, x);
  }

  /** Show `state` in the controls (without reporting it back as a change). */
  render(state) {
    const value = (v) => (v === undefined ? "" : String(v));
    if (document.activeElement !== this.runsInput) this.runsInput.value = value(state.runs);
    if (document.activeElement !== this.tagsInput) this.tagsInput.value = value(state.tags);
    const groupBy = parseGroupBy(state.group_by);
    fillSelect(this.groupSelect, groupModes(this.options), groupBy.mode);
    if (document.activeElement !== this.groupPattern) this.groupPattern.value = groupBy.pattern;
    this.showGroupDetails(groupBy.mode);
    this.renderHparams(this.listedHparams, state.group_by);
    fillSelect(this.centerSelect, servedValues(this.options, "center"), state.center);
    fillSelect(this.bandSelect, servedValues(this.options, "band"), state.band);
    this.minRuns.value = value(state.min_runs);
    this.smoothRange.value = value(state.smoothing);
    this.smoothNumber.value = value(state.smoothing);
    this.fillX(state.x);
    this.logY.input.checked = Boolean(state.log_y);
    this.showRuns.input.checked = Boolean(state.show_runs);
  }

  /** Show the backend's message under the control of `option`; other controls are cleared. */
  setError(option, message) {
    for (const [name, slot] of this.errors) {
      const mine = name === option;
      slot.hidden = !mine;
      slot.textContent = mine ? message : "";
    }
  }

  /** List the matching runs under their group, with the group's color, and the runs left out. */
  setListing(listing, colors, state) {
    this.listedHparams = listing.hparams || [];
    this.renderHparams(this.listedHparams, state.group_by);
    this.tags = listing.tags || [];
    this.fillX(state.x);
    clear(this.runList);
    const groups = Object.entries(listing.groups || {});
    const unplaced = Object.entries(listing.unplaced || {});
    const matched = listing.runs.length;
    this.runsSummary.textContent =
      `${matched} of ${listing.total_runs} runs match` +
      (groups.length ? `, in ${groups.length} group${groups.length === 1 ? "" : "s"}` : "") +
      (unplaced.length ? `; ${unplaced.length} left out` : "");
    const collapsed = matched > 60;
    for (const [group, runs] of groups) {
      const swatch = el("span", { className: "swatch" });
      swatch.style.background = colors.get(group);
      this.runList.appendChild(
        this.groupBlock(
          el("summary", {}, swatch, el("span", { className: "group-name", text: group, title: group }),
            el("span", { className: "count", text: String(runs.length) })),
          runs.map((run) => el("li", { text: run, title: run })),
          runs.length,
          collapsed,
        ),
      );
    }
    if (unplaced.length) {
      this.runList.appendChild(
        this.groupBlock(
          el("summary", {}, el("span", { className: "swatch left-out" }),
            el("span", { className: "group-name", text: "Left out" }),
            el("span", { className: "count", text: String(unplaced.length) })),
          unplaced.map(([run, reason]) => el("li", { title: reason }, run, el("span", { className: "muted", text: ` (${reason})` }))),
          unplaced.length,
          collapsed,
        ),
      );
    }
  }

  groupBlock(summary, items, total, collapsed) {
    const list = el("ul", {}, items.slice(0, RUNS_SHOWN_PER_GROUP));
    if (total > RUNS_SHOWN_PER_GROUP) {
      list.appendChild(el("li", { className: "muted", text: `… and ${total - RUNS_SHOWN_PER_GROUP} more` }));
    }
    return el("details", { className: "run-group", open: !collapsed }, summary, list);
  }
}
