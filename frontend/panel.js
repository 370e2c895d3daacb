// The side panel: every control of the tab, and the runs that match, listed under their group so the
// user sees which runs were put together before reading any curve.

import { clear, debounce, el } from "./dom.js";

const GROUP_MODES = [
  ["auto", "auto (name without seed / run index)"],
  ["parent", "parent folder"],
  ["regex", "regex capture"],
  ["hparam", "hparams"],
  ["none", "none (one group)"],
];
const CENTERS = [
  ["mean", "mean"],
  ["median", "median"],
];
const BANDS = [
  ["std", "±1 std"],
  ["sem", "±1 standard error"],
  ["ci95", "95% CI (Student t)"],
  ["minmax", "min–max"],
  ["iqr", "IQR (25th–75th pct)"],
  ["none", "none"],
];
const X_AXES = [
  ["step", "step"],
  ["relative", "relative"],
  ["wall", "wall"],
];
const TEXT_DELAY_MS = 500;
const RUNS_SHOWN_PER_GROUP = 100;

function parseGroupBy(value) {
  if (value.startsWith("regex:")) return { mode: "regex", pattern: value.slice(6), names: [] };
  if (value.startsWith("hparam:")) {
    return { mode: "hparam", pattern: "", names: value.slice(7).split(",").filter(Boolean) };
  }
  return { mode: value, pattern: "", names: [] };
}

function select(name, options, label) {
  return el(
    "select",
    { name, "aria-label": label, className: "control-select" },
    options.map(([value, text]) => el("option", { value, text })),
  );
}

/** The side panel. `onChange(patch)` receives the settings the user changed. */
export class Panel {
  constructor(root, onChange) {
    this.onChange = onChange;
    this.errors = new Map(); // option -> element showing its error
    this.groupBy = { mode: "auto", pattern: "", names: [] };
    this.hparams = [];
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

    // Grouping.
    this.groupSelect = select("group_mode", GROUP_MODES, "Group runs by");
    this.groupSelect.addEventListener("change", () => {
      this.groupBy.mode = this.groupSelect.value;
      this.showGroupDetails();
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
    const patternChanged = debounce(() => {
      this.groupBy.pattern = this.groupPattern.value;
      this.emitGroupBy();
    }, TEXT_DELAY_MS);
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
    this.centerSelect = select("center", CENTERS, "Center line");
    this.centerSelect.addEventListener("change", () => this.onChange({ center: this.centerSelect.value }));
    this.bandSelect = select("band", BANDS, "Band");
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
    this.xRadios = el(
      "div",
      { className: "radio-row", role: "radiogroup", "aria-label": "Horizontal axis" },
      X_AXES.map(([value, text]) =>
        el(
          "label",
          { className: "radio" },
          el("input", { type: "radio", name: "x", value, on: { change: () => this.onChange({ x: value }) } }),
          text,
        ),
      ),
    );
    this.logY = this.checkbox("log_y", "Log-scale y axis");
    this.showRuns = this.checkbox("show_runs", "Show individual runs");
    panel.appendChild(
      this.section(
        "Chart",
        this.row("Smoothing", this.smoothRange, this.smoothNumber),
        this.errorSlot("smoothing"),
        el("div", { className: "muted small", text: "Per run, before reducing (TensorBoard's formula)." }),
        this.row("X axis", this.xRadios),
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

  emitGroupBy() {
    const { mode, pattern, names } = this.groupBy;
    let value = mode;
    let hint = "";
    if (mode === "regex") {
      hint = "The first capture group (or the whole match) names the group; runs that do not match are left out.";
      if (!pattern) {
        this.groupHint.textContent = "Type a regular expression with a capture group, e.g. (lr=[^/]+)";
        return;
      }
      value = `regex:${pattern}`;
    } else if (mode === "hparam") {
      if (!names.length) {
        this.groupHint.textContent = this.hparams.length
          ? "Choose one or more hparams."
          : "No hparams were found in these runs.";
        return;
      }
      value = `hparam:${names.join(",")}`;
    }
    this.groupHint.textContent = hint;
    this.onChange({ group_by: value });
  }

  showGroupDetails() {
    const { mode } = this.groupBy;
    this.groupPattern.hidden = mode !== "regex";
    this.hparamBox.hidden = mode !== "hparam";
    if (mode !== "regex" && mode !== "hparam") this.groupHint.textContent = "";
  }

  renderHparams() {
    clear(this.hparamBox);
    const names = [...new Set([...this.hparams, ...this.groupBy.names])];
    for (const name of names) {
      const input = el("input", { type: "checkbox", name: "hparam", value: name, checked: this.groupBy.names.includes(name) });
      input.addEventListener("change", () => {
        const chosen = new Set(this.groupBy.names);
        if (input.checked) chosen.add(name);
        else chosen.delete(name);
        // Keep the order the hparams are listed in, so the group names do not jump around.
        this.groupBy.names = names.filter((n) => chosen.has(n));
        this.emitGroupBy();
      });
      this.hparamBox.appendChild(el("label", { className: "checkbox" }, input, name));
    }
    if (!names.length) this.hparamBox.appendChild(el("div", { className: "muted small", text: "No hparams found." }));
  }

  /** Show `state` in the controls (without reporting it back as a change). */
  setState(state) {
    if (document.activeElement !== this.runsInput) this.runsInput.value = state.runs;
    if (document.activeElement !== this.tagsInput) this.tagsInput.value = state.tags;
    this.groupBy = parseGroupBy(state.group_by);
    this.groupSelect.value = GROUP_MODES.some(([v]) => v === this.groupBy.mode) ? this.groupBy.mode : "auto";
    if (document.activeElement !== this.groupPattern) this.groupPattern.value = this.groupBy.pattern;
    this.showGroupDetails();
    this.renderHparams();
    this.centerSelect.value = state.center;
    this.bandSelect.value = state.band;
    this.minRuns.value = String(state.min_runs);
    this.smoothRange.value = String(state.smoothing);
    this.smoothNumber.value = String(state.smoothing);
    for (const radio of this.xRadios.querySelectorAll("input")) radio.checked = radio.value === state.x;
    this.logY.input.checked = state.log_y;
    this.showRuns.input.checked = state.show_runs;
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
  setListing(listing, colors) {
    this.hparams = listing.hparams || [];
    this.renderHparams();
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
