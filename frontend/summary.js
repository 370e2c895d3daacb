// The summary under the charts: per tag and group the final and the best value of the center line
// with the band around it, where the best was reached and how many runs stand behind it. Groups are
// tested against each other in the Compare section (compare.js).

import { clear, copyButtons, el, fmt, fmtX } from "./dom.js";
import { naturalCompare, optionLabel, xLabel } from "./state.js";

function valueCell(center, lo, hi, band) {
  const text = band === "none" || lo === null || hi === null ? fmt(center) : `${fmt(center)}  [${fmt(lo)}, ${fmt(hi)}]`;
  return el("td", { className: "num", text });
}

/**
 * The summary section. `hooks`: textUrl(format) -> URL of the table as "md" or "tex" for the current
 * settings; getText(url) -> the body of a GET (for the copy buttons).
 */
export class Summary {
  constructor(root, hooks) {
    this.table = el("table", { className: "summary-table" });
    this.caption = el("div", { className: "muted small" });
    this.message = el("div", { className: "compare-message muted", role: "status", text: "Scroll here for the summary." });
    this.wrap = el("div", { className: "table-wrap", hidden: true }, this.table);
    root.appendChild(
      el(
        "div",
        { className: "summary-inner" },
        el(
          "div",
          { className: "section-head" },
          el("h2", { text: "Summary" }),
          el("span", { className: "spacer" }),
          ...copyButtons(hooks.textUrl, hooks.getText),
        ),
        this.caption,
        this.message,
        this.wrap,
      ),
    );
  }

  showMessage(text, error = false) {
    this.message.hidden = !text;
    this.message.textContent = text || "";
    this.message.classList.toggle("field-error", error);
    if (text) this.wrap.hidden = true;
  }

  /** Draw the table; `served` is the backend's options, for the labels of the line, the band and the axis. */
  render(payload, state, colors, served) {
    this.showMessage(payload.rows.length ? null : "No final values with these settings.");
    this.wrap.hidden = !payload.rows.length;
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
    // Tags in natural order (metric_2 before metric_10), as the charts; groups as the backend sent them.
    const rows = payload.rows.map((row, i) => [row, i]);
    rows.sort(([a, i], [b, j]) => naturalCompare(a.tag, b.tag) || i - j);
    for (const [row] of rows) {
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
  }
}
