// Small DOM helpers. Every name that comes from the logs (runs, tags, groups, hparams) reaches the page
// through textContent or an attribute value, never as HTML.

/**
 * Create an element. `props`: className, text (textContent), title, dataset, on (event handlers),
 * and any other key set as an attribute. Children may be nodes or strings (added as text).
 */
export function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "className") node.className = value;
    else if (key === "text") node.textContent = String(value);
    else if (key === "dataset") Object.assign(node.dataset, value);
    else if (key === "on") for (const [type, fn] of Object.entries(value)) node.addEventListener(type, fn);
    else if (key === "value") node.value = value;
    else if (key === "checked") node.checked = Boolean(value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
  }
  return node;
}

/** Remove every child of `node`. */
export function clear(node) {
  while (node.firstChild) node.removeChild(node.firstChild);
  return node;
}

/**
 * Plotly renders trace names and hover templates as a small HTML subset; escaping the three markup
 * characters makes a name from the logs show as the literal text it is.
 */
export function plotlyText(value) {
  return String(value).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** A short, readable number for tables and hover text (display only, no statistics). */
export function fmt(value, digits = 4) {
  if (value === null || value === undefined || Number.isNaN(value)) return "–";
  if (typeof value !== "number") return String(value);
  if (!Number.isFinite(value)) return value > 0 ? "inf" : "-inf";
  if (value !== 0 && (Math.abs(value) >= 1e6 || Math.abs(value) < 1e-4)) return value.toExponential(digits - 1);
  return String(Number(value.toPrecision(digits)));
}

/** Format an x value (step, seconds since start, epoch seconds, or another tag's value) for people. */
export function fmtX(value, axis) {
  if (value === null || value === undefined) return "–";
  if (axis === "wall") return new Date(value * 1000).toISOString().replace("T", " ").replace(/\.\d+Z$/, "Z");
  if (axis === "relative") return `${fmt(value, 4)} s`;
  if (typeof axis === "string" && axis.startsWith("tag:")) return fmt(value, 6);
  return String(value);
}

/**
 * A tag as a file name's stem: runs of characters other than A-Za-z0-9._- become "_", with none of
 * "._-" at either end (the rule of the backend's CSV download name, export.download_name).
 */
export function fileStem(tag) {
  return String(tag).replace(/[^A-Za-z0-9._-]+/g, "_").replace(/^[._-]+|[._-]+$/g, "") || "tag";
}

/** Run `fn` once `ms` after the last call. */
export function debounce(fn, ms) {
  let timer = null;
  const wrapped = (...args) => {
    clearTimeout(timer);
    timer = setTimeout(() => fn(...args), ms);
  };
  wrapped.flush = (...args) => {
    clearTimeout(timer);
    fn(...args);
  };
  return wrapped;
}

/** A number with 3 significant digits for the comparison tables ("–" for none). */
export function fmt3(value) {
  return fmt(value, 3);
}

/** A p-value as people read them: two significant digits (0.0013, 0.76), "<0.0001" below that. */
export function fmtP(p) {
  if (p === null || p === undefined || Number.isNaN(p)) return "–";
  if (p < 1e-4) return "<0.0001";
  return String(Number(p.toPrecision(2)));
}

/**
 * Put `text` on the clipboard: the Clipboard API, or where the page may not use it (an iframe without
 * the permission, a page over plain HTTP) a hidden textarea copied with execCommand. Resolves when
 * copied; throws when neither way worked.
 */
export async function copyText(text) {
  try {
    if (navigator.clipboard && navigator.clipboard.writeText) {
      await navigator.clipboard.writeText(text);
      return;
    }
  } catch {
    // Refused: try the old way below.
  }
  const area = el("textarea", { readonly: true, "aria-hidden": "true" });
  area.value = text;
  area.style.position = "fixed";
  area.style.top = "-1000px";
  area.style.opacity = "0";
  document.body.appendChild(area);
  const focused = document.activeElement;
  area.select();
  let copied = false;
  try {
    copied = document.execCommand("copy");
  } finally {
    area.remove();
    if (focused && focused.focus) focused.focus();
  }
  if (!copied) throw new Error("the browser did not allow copying");
}

/**
 * "Copy as Markdown" / "Copy as LaTeX" buttons for a table: `url(format)` gives the backend's text of
 * the table in that format ("md" or "tex"), fetched when clicked; "Copied" shows briefly after.
 * Returns the nodes to place (two buttons and the status).
 */
export function copyButtons(url, getText) {
  const status = el("span", { className: "copy-status", role: "status", "aria-live": "polite" });
  let timer = null;
  const say = (text, error = false) => {
    clearTimeout(timer);
    status.textContent = text;
    status.classList.toggle("error", error);
    if (text) timer = setTimeout(() => (status.textContent = ""), error ? 6000 : 1800);
  };
  const button = (format, label) =>
    el("button", {
      type: "button",
      className: "button small",
      text: label,
      dataset: { role: `copy-${format}` },
      title: format === "md" ? "Copy the table as Markdown" : "Copy the table as a LaTeX table (booktabs)",
      on: {
        click: async () => {
          say("Copying…");
          try {
            await copyText(await getText(url(format)));
            say("Copied");
          } catch (error) {
            say(`Could not copy: ${error.message}`, true);
          }
        },
      },
    });
  return [button("md", "Copy as Markdown"), button("tex", "Copy as LaTeX"), status];
}
