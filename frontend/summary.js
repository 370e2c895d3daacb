// The summary under the charts: per tag and group the final and the best value of the center line
// with the band around it, where the best was reached and how many runs stand behind it; and, for two
// chosen groups, the backend's Welch t-test on the runs' final values.

import { clear, el, fmt, fmtX } from "./dom.js";
import { optionLabel, xLabel } from "./state.js";

function valueCell(center, lo, hi, band) {
  const text = band === "none" || lo === null || hi === null ? fmt(center) : `${fmt(center)}  [${fmt(lo)}, ${fmt(hi)}]`;
  return el("td", { className: "num", text });
}

function options(selectNode, values, chosen) {
  clear(selectNode);
  for (const value of values) selectNode.appendChild(el("option", { value, text: value }));
  selectNode.value = chosen;
}

/** The summary section. `onCompare(patch)` receives a new compare_tag / compare_a / compare_b. */
export class Summary {
  constructor(root, onCompare) {
    this.onCompare = onCompare;
    this.tagSelect = el("select", { name: "compare_tag", "aria-label": "Tag to compare" });
    this.aSelect = el("select", { name: "compare_a", "aria-label": "First group" });
    this.bSelect = el("select", { name: "compare_b", "aria-label": "Second group" });
    this.tagSelect.addEventListener("change", () => this.onCompare({ compare_tag: this.tagSelect.value }));
    this.aSelect.addEventListener("change", () => this.onCompare({ compare_a: this.aSelect.value }));
    this.bSelect.addEventListener("change", () => this.onCompare({ compare_b: this.bSelect.value }));
    this.result = el("div", { className: "compare-result", "aria-live": "polite" });
    this.table = el("table", { className: "summary-table" });
    this.caption = el("div", { className: "muted small" });
    root.appendChild(
      el(
        "div",
        { className: "summary-inner" },
        el("h2", { text: "Summary" }),
        this.caption,
        el("div", { className: "table-wrap" }, this.table),
        el(
          "div",
          { className: "compare" },
          el("span", { className: "compare-label", text: "Compare final values:" }),
          this.tagSelect,
          this.aSelect,
          el("span", { text: "vs" }),
          this.bSelect,
          this.result,
        ),
      ),
    );
  }

  /** The compare choices actually used: the user's, or sensible defaults when those do not exist. */
  static choices(state, listing) {
    const groups = Object.keys(listing.groups || {});
    const tags = listing.tags || [];
    const tag = tags.includes(state.compare_tag) ? state.compare_tag : tags[0] || "";
    const a = groups.includes(state.compare_a) ? state.compare_a : groups[0] || "";
    const b = groups.includes(state.compare_b) ? state.compare_b : groups.find((g) => g !== a) || "";
    return { tag, a, b };
  }

  /**
   * Draw the table and the comparison. `compareError` is the message when the test could not run;
   * `served` is the backend's options, for the labels of the line, the band and the axis.
   */
  render(payload, listing, state, colors, choice, compareError, served) {
    const band = state.band;
    this.caption.textContent =
      `Line: ${optionLabel(served, "center", state.center)}; band: ${optionLabel(served, "band", band)}. ` +
      "Best is the lowest value for losses and errors, the highest otherwise. n: runs behind the final point.";
    clear(this.table);
    const xName = xLabel(served, payload.x);
    this.table.appendChild(
      el(
        "thead",
        {},
        el(
          "tr",
          {},
          ["Tag", "Group", "Runs", "Final", `at ${xName}`, "n", "Best", `at ${xName}`].map((h) => el("th", { text: h })),
        ),
      ),
    );
    const body = el("tbody");
    for (const row of payload.rows) {
      const swatch = el("span", { className: "swatch" });
      swatch.style.background = colors.get(row.group) || "#999";
      const fewer = row.final_n < row.runs;
      body.appendChild(
        el(
          "tr",
          { dataset: { tag: row.tag, group: row.group } },
          el("td", { text: row.tag }),
          el("td", {}, swatch, row.group),
          el("td", { className: "num", text: String(row.runs) }),
          valueCell(row.final, row.final_lo, row.final_hi, band),
          el("td", { className: "num", text: fmtX(row.final_x, payload.x) }),
          el("td", {
            className: fewer ? "num warn" : "num",
            text: String(row.final_n),
            title: fewer ? "fewer runs than the group reach the last point" : "",
          }),
          valueCell(row.best, row.best_lo, row.best_hi, band),
          el("td", { className: "num", text: `${fmtX(row.best_x, payload.x)} (${row.best_is})` }),
        ),
      );
    }
    this.table.appendChild(body);

    const groups = Object.keys(listing.groups || {});
    options(this.tagSelect, listing.tags || [], choice.tag);
    options(this.aSelect, groups, choice.a);
    options(this.bSelect, groups, choice.b);
    clear(this.result);
    const test = payload.compare;
    if (compareError) {
      this.result.appendChild(el("span", { className: "field-error", text: compareError }));
    } else if (groups.length < 2) {
      this.result.textContent = "needs two groups";
    } else if (choice.a === choice.b) {
      this.result.textContent = "choose two different groups";
    } else if (test) {
      const p = test.p_value;
      const text =
        p === null || p === undefined
          ? `p-value not available (n = ${test.n_a} vs ${test.n_b}: each group needs 2 runs with a final value)`
          : `p = ${fmt(p, 3)}  (Welch's t-test, n = ${test.n_a} vs ${test.n_b}; means ${fmt(test.mean_a)} vs ${fmt(test.mean_b)})`;
      const dataset = { tag: test.tag, a: test.a, b: test.b }; // which comparison this is
      this.result.appendChild(el("span", { className: "p-value", text, dataset }));
    }
  }
}
