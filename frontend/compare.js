// The Compare section under the charts: one tag, one score per run, and the groups tested against
// each other (every pair, or each against a baseline). The backend computes every number (/compare:
// both tables, the caption, one sentence per pair, notes); this module only lays them out. p-values
// are shown adjusted (Holm) as the primary p; names from the logs reach the page as text only.

import { clear, copyButtons, el, fmt3, fmtP } from "./dom.js";
import { naturalCompare } from "./state.js";

const ALPHA = 0.05;

function swatched(name, colors) {
  const swatch = el("span", { className: "swatch" });
  swatch.style.background = colors.get(name) || "#999";
  return el("td", { className: "name" }, swatch, el("span", { text: name, title: name }));
}

function num(text, extra = {}) {
  return el("td", { className: "num", text, ...extra });
}

/** "0.512 ± 0.031": a value with the half-width of its symmetric interval (Student t). */
function plusMinus(value, lo, hi) {
  if (value === null || value === undefined) return "–";
  if (lo === null || hi === null || lo === undefined || hi === undefined) return fmt3(value);
  return `${fmt3(value)} ± ${fmt3((hi - lo) / 2)}`;
}

/** "0.512 [0.48, 0.55]": a value with its interval (bootstrap: not symmetric). */
function bracketed(value, lo, hi, format = fmt3) {
  if (value === null || value === undefined) return "–";
  if (lo === null || hi === null || lo === undefined || hi === undefined) return format(value);
  return `${format(value)} [${format(lo)}, ${format(hi)}]`;
}

function probability(p) {
  return p === null || p === undefined ? "–" : p.toFixed(2);
}

function runsNeeded(n) {
  if (n === null || n === undefined) return "–";
  return Number(n).toLocaleString("en-US");
}

function header(cells) {
  return el(
    "thead",
    {},
    el(
      "tr",
      {},
      cells.map(([text, title]) => el("th", { text, title })),
    ),
  );
}

/**
 * The section. `hooks`:
 *   onChange(patch)  -> the user chose another compare_tag, score or baseline
 *   csvUrl(table)    -> URL of the table ("groups" or "pairs") as CSV, for the current choices
 *   textUrl(format)  -> URL of both tables as "md" or "tex", for the current choices
 *   getText(url)     -> the body of a GET (for the copy buttons)
 */
export class Compare {
  constructor(root, hooks) {
    this.root = root;
    this.hooks = hooks;
    const select = (name, label) =>
      el("select", {
        name,
        "aria-label": label,
        className: "control-select",
        on: { change: (event) => hooks.onChange({ [name]: event.target.value }) },
      });
    this.tagSelect = select("compare_tag", "Tag to compare");
    this.scoreSelect = select("score", "Score of each run");
    this.baselineSelect = select("baseline", "Baseline group");
    this.direction = el("span", { className: "direction", hidden: true });
    this.caption = el("p", { className: "compare-caption muted small" });
    this.message = el("div", { className: "compare-message muted", role: "status" });
    this.groupsTable = el("table", { className: "data-table compare-groups" });
    this.pairsTable = el("table", { className: "data-table compare-pairs" });
    this.sentences = el("ul", { className: "sentences" });
    this.notes = el("ul", { className: "compare-notes muted small" });
    const csv = (table, label) =>
      el("a", {
        className: "button small",
        text: "Download CSV",
        download: "",
        title: `The ${label} table as CSV, every digit`,
        dataset: { role: `csv-${table}` },
      });
    this.groupsCsv = csv("groups", "groups");
    this.pairsCsv = csv("pairs", "pairs");
    this.body = el(
      "div",
      { className: "compare-body", hidden: true },
      this.caption,
      el("div", { className: "table-head" }, el("h3", { text: "Groups" }), this.groupsCsv),
      el("div", { className: "table-wrap" }, this.groupsTable),
      el("div", { className: "table-head" }, el("h3", { text: "Pairs" }), this.pairsCsv),
      el("div", { className: "table-wrap" }, this.pairsTable),
      this.sentences,
      this.notes,
    );
    const label = (text, control) => el("label", { className: "compare-control" }, el("span", { text }), control);
    root.appendChild(
      el(
        "div",
        { className: "summary-inner" },
        el(
          "div",
          { className: "section-head" },
          el("h2", { text: "Compare" }),
          this.direction,
          el("span", { className: "spacer" }),
          ...copyButtons(hooks.textUrl, hooks.getText),
        ),
        el(
          "div",
          { className: "compare-controls" },
          label("Tag", this.tagSelect),
          label("Score", this.scoreSelect),
          label("Baseline", this.baselineSelect),
        ),
        this.message,
        this.body,
      ),
    );
    this.showMessage("Scroll here to compare the groups.");
  }

  /** The choices used: the user's where they exist, else the first tag, the served score, no baseline. */
  static choices(state, listing) {
    const tags = [...(listing.tags || [])].sort(naturalCompare);
    const groups = Object.keys(listing.groups || {});
    return {
      tag: tags.includes(state.compare_tag) ? state.compare_tag : tags[0] || "",
      score: state.score,
      baseline: groups.includes(state.baseline) ? state.baseline : "",
    };
  }

  /** Fill the menus: the listing's tags and groups, the served scores, and `choice`. */
  setChoices(listing, options, choice) {
    const fill = (node, entries, chosen) => {
      const key = JSON.stringify(entries);
      if (node.dataset.entries !== key) {
        clear(node);
        for (const [value, text] of entries) node.appendChild(el("option", { value, text }));
        node.dataset.entries = key;
      }
      node.value = chosen;
    };
    const tags = [...(listing.tags || [])].sort(naturalCompare);
    fill(this.tagSelect, tags.map((t) => [t, t]), choice.tag);
    const scores = (options && options.score && options.score.values) || [];
    fill(this.scoreSelect, scores.filter(Array.isArray).map(([v, text]) => [String(v), String(text)]), choice.score);
    const groups = Object.keys(listing.groups || {});
    fill(this.baselineSelect, [["", "none (every pair)"], ...groups.map((g) => [g, g])], choice.baseline);
    this.groupsCsv.href = this.hooks.csvUrl("groups");
    this.pairsCsv.href = this.hooks.csvUrl("pairs");
  }

  showMessage(text, error = false) {
    this.message.hidden = !text;
    this.message.textContent = text || "";
    this.message.classList.toggle("field-error", error);
    if (error) this.body.hidden = true;
  }

  /** Draw the /compare answer. */
  render(payload, colors) {
    this.showMessage(null);
    this.body.hidden = false;
    this.direction.hidden = false;
    this.direction.textContent = payload.direction;
    this.direction.title = `The better group has the ${payload.direction.startsWith("lower") ? "lower" : "higher"} score`;
    this.caption.textContent = payload.caption;
    this.root.dataset.tag = payload.tag;
    this.root.dataset.score = payload.score;
    this.root.dataset.baseline = payload.baseline || "";

    const lower = payload.direction.startsWith("lower");
    const means = payload.groups.map((g) => g.mean).filter((m) => m !== null && m !== undefined);
    const best = means.length ? (lower ? Math.min(...means) : Math.max(...means)) : null;
    clear(this.groupsTable).appendChild(
      header([
        ["Group"],
        ["Runs"],
        ["Mean ± 95% CI", "The runs' mean score with its 95% confidence interval (Student t)"],
        ["Median"],
        ["IQM [95% CI]", "Interquartile mean with its 95% percentile-bootstrap interval"],
      ]),
    );
    const groupRows = el("tbody");
    for (const g of payload.groups) {
      const isBest = best !== null && g.mean === best && payload.groups.length > 1;
      groupRows.appendChild(
        el(
          "tr",
          { dataset: { group: g.group } },
          swatched(g.group, colors),
          num(String(g.runs)),
          num(plusMinus(g.mean, g.ci95_lo, g.ci95_hi), { className: isBest ? "num best" : "num", title: isBest ? `best mean (${payload.direction})` : "" }),
          num(fmt3(g.median)),
          num(bracketed(g.iqm, g.iqm_lo, g.iqm_hi)),
        ),
      );
    }
    this.groupsTable.appendChild(groupRows);

    clear(this.pairsTable).appendChild(
      header([
        ["A"],
        ["B"],
        ["A − B [95% CI]", "Difference of the means with Welch's 95% confidence interval"],
        ["p (Holm)", "Welch's t-test, two-sided, adjusted by Holm over the pairs of this table"],
        ["Mann-Whitney p", "Mann-Whitney U test, two-sided (not adjusted)"],
        ["P(A>B) [95% CI]", "Probability that a run of A scores higher than a run of B, with its bootstrap interval"],
        ["Runs needed", "Runs per group for 80% power at alpha 0.05, for the observed difference"],
      ]),
    );
    const pairRows = el("tbody");
    for (const p of payload.pairs) {
      const significant = p.p_holm !== null && p.p_holm !== undefined && p.p_holm < ALPHA;
      pairRows.appendChild(
        el(
          "tr",
          { dataset: { a: p.a, b: p.b }, className: significant ? "significant" : "" },
          swatched(p.a, colors),
          swatched(p.b, colors),
          num(bracketed(p.diff, p.diff_lo, p.diff_hi)),
          num(fmtP(p.p_holm), { className: significant ? "num p strong" : "num p" }),
          num(fmtP(p.p_mwu)),
          num(bracketed(p.p_improve, p.p_improve_lo, p.p_improve_hi, probability)),
          num(runsNeeded(p.runs_needed)),
        ),
      );
    }
    this.pairsTable.appendChild(pairRows);

    clear(this.sentences);
    payload.sentences.forEach((sentence, i) => {
      const pair = payload.pairs[i];
      const significant = pair && pair.p_holm !== null && pair.p_holm < ALPHA;
      this.sentences.appendChild(el("li", { className: significant ? "significant" : "", text: sentence }));
    });
    clear(this.notes);
    for (const note of payload.notes || []) this.notes.appendChild(el("li", { text: note }));
  }
}
