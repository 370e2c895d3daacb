// From one /aggregate payload to a Plotly figure: per group a shaded band (lo and hi traces, the second
// filled down to the first), a center line (solid where every run of the group stands behind the point,
// dashed where fewer do) and, on request, the group's runs as faint lines. No statistics here: every
// number drawn comes from the backend.

import { fmt, plotlyText } from "./dom.js";

// TensorBoard-like colors: readable on white and distinct from each other.
const PALETTE = [
  "#1a73e8", "#e8710a", "#1e8e3e", "#d93025", "#9334e6",
  "#12b5cb", "#e52592", "#f9ab00", "#425066", "#7cb342",
];

/** A color for the `index`-th group (the palette first, then evenly spread hues). */
export function colorFor(index) {
  if (index < PALETTE.length) return PALETTE[index];
  const hue = Math.round((index * 137.508) % 360);
  return `hsl(${hue}, 60%, 45%)`;
}

/** The same color with transparency (for bands and individual runs). */
export function withAlpha(color, alpha) {
  if (color.startsWith("#")) {
    const n = parseInt(color.slice(1), 16);
    return `rgba(${(n >> 16) & 255}, ${(n >> 8) & 255}, ${n & 255}, ${alpha})`;
  }
  return color.replace(/^hsl\((.*)\)$/, `hsla($1, ${alpha})`);
}

function toAxis(values, axis) {
  return axis === "wall" ? values.map((v) => (v === null ? null : v * 1000)) : values;
}

/** Split the center line: `full` where n equals the group size, `partial` (joined to its neighbours) elsewhere. */
export function splitByCoverage(center, n, size) {
  const full = center.map((v, i) => (n[i] >= size ? v : null));
  const partial = center.map((v, i) => (n[i] < size ? v : null));
  for (let i = 0; i < center.length; i++) {
    if (n[i] < size) continue;
    // Repeat the full point next to a partial stretch so the dashed line meets the solid one.
    if ((i > 0 && n[i - 1] < size) || (i + 1 < center.length && n[i + 1] < size)) partial[i] = center[i];
  }
  return { full, partial, hasPartial: n.some((k) => k < size) };
}

/**
 * One undrawn trace per group carries the hover text for every point (the solid and dashed pieces of
 * the line would each report their own nearest point, which at the seam is not the hovered step).
 */
function hoverTrace(g, x, name, color, band) {
  const customdata = g.center.map((_, i) => {
    const bandText =
      band === "none" ? "" : g.lo[i] === null ? "  (no band: 1 run)" : `  [${fmt(g.lo[i])}, ${fmt(g.hi[i])}]`;
    const fewer = g.n[i] < g.size;
    // The glyph repeats the line's look at this point: solid, or dashed where fewer runs stand behind it.
    return [bandText, g.n[i], g.size, fewer ? "  fewer runs" : "", fewer ? "╍╍" : "━━"];
  });
  return {
    type: "scatter",
    mode: "lines",
    x,
    y: g.center,
    line: { color, width: 0 },
    customdata,
    hovertemplate:
      `<span style="color:${color}">%{customdata[4]}</span> <b>${name}</b>  %{y:.4~g}%{customdata[0]}` +
      "  n=%{customdata[1]}/%{customdata[2]}%{customdata[3]}<extra></extra>",
    showlegend: false,
    name,
    meta: { role: "hover", group: g.group },
  };
}

/**
 * Build `{data, layout}` for one tag.
 * @param payload the /aggregate JSON
 * @param view {colors: Map group->color, logY, showRuns, uirevision, xTitle (the axis's label),
 *   theme (colors and opacities of the page's light or dark look: see theme.js)}
 */
export function buildFigure(payload, view) {
  const axis = payload.x;
  const band = payload.band;
  const theme = view.theme;
  const data = [];
  for (const g of payload.groups) {
    const color = view.colors.get(g.group) || colorFor(0);
    const name = plotlyText(g.group);
    const x = toAxis(g.x, axis);
    if (view.showRuns && Array.isArray(g.individual)) {
      for (const run of g.individual) {
        data.push({
          type: "scatter",
          mode: "lines",
          x: toAxis(run.x, axis),
          y: run.y,
          line: { color, width: 1 },
          opacity: theme.runOpacity,
          hoverinfo: "skip",
          showlegend: false,
          meta: { role: "run", group: g.group, run: run.run },
        });
      }
    }
    if (band !== "none") {
      const common = { type: "scatter", mode: "lines", x, hoverinfo: "skip", showlegend: false };
      data.push({ ...common, y: g.lo, line: { color, width: 0 }, meta: { role: "band_lo", group: g.group } });
      data.push({
        ...common,
        y: g.hi,
        line: { color, width: 0 },
        fill: "tonexty",
        fillcolor: withAlpha(color, theme.bandOpacity),
        meta: { role: "band_hi", group: g.group },
      });
    }
    const { full, partial, hasPartial } = splitByCoverage(g.center, g.n, g.size);
    const line = { type: "scatter", mode: "lines", x, hoverinfo: "skip", showlegend: false };
    data.push({ ...line, y: full, line: { color, width: 2 }, meta: { role: "center", group: g.group } });
    if (hasPartial) {
      // Fewer runs than the group: dashed and thinner, so it never passes for the whole group.
      data.push({
        ...line,
        y: partial,
        line: { color, width: 1.5, dash: "dash" },
        meta: { role: "center_partial", group: g.group },
      });
    }
    data.push(hoverTrace(g, x, name, color, band));
  }
  const layout = {
    height: 250,
    margin: { l: 56, r: 14, t: 8, b: 40 },
    hovermode: "x unified",
    hoverlabel: {
      bgcolor: theme.hoverBg,
      bordercolor: theme.hoverBorder,
      font: { size: 11, color: theme.hoverText },
    },
    showlegend: false,
    legend: { bgcolor: theme.paper, font: { color: theme.text } },
    font: { family: "Roboto, system-ui, -apple-system, 'Segoe UI', sans-serif", size: 11, color: theme.text },
    xaxis: {
      type: axis === "wall" ? "date" : "linear",
      title: { text: view.xTitle || axis, standoff: 6, font: { size: 11 } },
      gridcolor: theme.grid,
      linecolor: theme.grid,
      zeroline: false,
    },
    yaxis: { type: view.logY ? "log" : "linear", gridcolor: theme.grid, linecolor: theme.grid, zeroline: false, automargin: true },
    paper_bgcolor: theme.paper,
    plot_bgcolor: theme.plot,
    modebar: { bgcolor: "rgba(0,0,0,0)", color: theme.modebar, activecolor: theme.modebarActive },
    // Keep the user's zoom across refreshes, reset it when the axes change meaning.
    uirevision: view.uirevision,
    shapes: alongShapes(payload, theme),
  };
  return { data, layout };
}

/**
 * Where two groups differ along x (`payload.along.ranges`, from the backend's test adjusted across the
 * x values): a faint shade over the plot's height and a strip along its bottom, under the curves. Each
 * range reaches half a grid step beyond its first and last x, so a single x shows too.
 */
export function alongShapes(payload, theme) {
  const along = payload.along;
  if (!along || !Array.isArray(along.ranges) || !along.ranges.length) return [];
  const scale = payload.x === "wall" ? 1000 : 1;
  const half = halfStep(payload.groups) * scale;
  const shapes = [];
  for (const [start, end] of along.ranges) {
    const x0 = start * scale - half;
    const x1 = end * scale + half;
    const common = { type: "rect", xref: "x", yref: "paper", x0, x1, line: { width: 0 }, layer: "below" };
    shapes.push({ ...common, y0: 0, y1: 1, fillcolor: theme.along, opacity: theme.alongShade });
    // The strip over the plot's bottom gridline (it would cut the strip in two), thin enough to hide no curve.
    shapes.push({ ...common, y0: 0, y1: 0.03, fillcolor: theme.along, opacity: theme.alongStrip, layer: "above" });
  }
  return shapes;
}

/** Half the median gap between neighbouring x values of the first group with two or more. */
function halfStep(groups) {
  for (const g of groups || []) {
    const xs = (g.x || []).filter((v) => v !== null);
    if (xs.length < 2) continue;
    const gaps = xs.slice(1).map((v, i) => v - xs[i]).sort((a, b) => a - b);
    return gaps[Math.floor(gaps.length / 2)] / 2;
  }
  return 0;
}

const EXPORT_TOP = 64; // px above the plot of an exported image: the tag and the legend

/**
 * The chart in `gd` as drawn (its traces, and its axes at their current range, zoomed or not), made a
 * picture of its own: the tag as title, and a legend naming each group with its run count and saying
 * what the line and band are. For Plotly.downloadImage / toImage.
 * @param gd the drawn plot element
 * @param payload the /aggregate JSON it was drawn from
 */
export function exportFigure(gd, payload) {
  const full = gd._fullLayout;
  const sizes = new Map(payload.groups.map((g) => [g.group, g.size]));
  let fewer = false;
  // The hover traces are never seen (no width): a still image has no use for them.
  const drawn = gd.data.filter((trace) => !(trace.meta && trace.meta.role === "hover"));
  const data = drawn.map((trace) => {
    const role = trace.meta && trace.meta.role;
    if (role === "center_partial") fewer = true;
    if (role !== "center") return { ...trace };
    const size = sizes.get(trace.meta.group);
    const name = plotlyText(`${trace.meta.group} (${size} run${size === 1 ? "" : "s"})`);
    return { ...trace, name, showlegend: true };
  });
  const band = payload.band_label || payload.band;
  const key = `line: ${payload.center} · band: ${band}${fewer ? " · dashed: fewer runs than the group" : ""}`;
  const axis = (name) => ({
    ...gd.layout[name],
    range: full[name].range.slice(),
    autorange: false,
    color: "#3c4043",
    gridcolor: "#e8eaed",
    linecolor: "#dadce0",
    zerolinecolor: "#dadce0",
  });
  const margin = { ...gd.layout.margin, t: EXPORT_TOP };
  return {
    data,
    layout: {
      ...gd.layout,
      // A generic family: the tab's web font is not there when the image is rendered or opened
      // elsewhere, and text measured in one font but drawn in another overlaps.
      font: { ...gd.layout.font, family: "sans-serif", color: "#3c4043" },
      // A picture for a paper or slides: light whatever the tab's theme.
      paper_bgcolor: "#ffffff",
      plot_bgcolor: "#ffffff",
      width: full.width,
      height: full.height + EXPORT_TOP - full.margin.t,
      margin,
      title: {
        text: `<b>${plotlyText(payload.tag)}</b>`,
        x: 0,
        xref: "paper",
        xanchor: "left",
        y: 1,
        yref: "container",
        yanchor: "top",
        pad: { t: 8 },
        font: { size: 13, color: "#202124" },
      },
      showlegend: true,
      legend: {
        orientation: "h",
        traceorder: "normal", // the groups in the tab's order (a filled band would reverse it)
        x: 0,
        xanchor: "left",
        y: 1.02,
        yanchor: "bottom",
        font: { size: 11, color: "#3c4043" },
        title: { text: plotlyText(key), side: "top", font: { size: 10, color: "#5f6368" } },
      },
      xaxis: axis("xaxis"),
      yaxis: axis("yaxis"),
    },
  };
}
