// Light or dark, as TensorBoard shows itself.
//
// TensorBoard's page (the one around the tab's iframe) marks its dark theme with the class
// `dark-mode` on its <body>: its settings menu (Browser default, Light, Dark) sets the class, and
// "Browser default" takes the browser's `prefers-color-scheme` when TensorBoard loads. The tab
// watches that class (the page is same-origin) and so changes with TensorBoard, without a reload.
// Opened on its own, or in a page it cannot read or that is not TensorBoard's, the tab follows
// `prefers-color-scheme` instead, live.
//
// The colors themselves are CSS custom properties in style.css (`:root` and `:root[data-theme=dark]`);
// the charts read theirs from the same properties, so each color is written once.

const DARK_CLASS = "dark-mode";
const MEDIA = "(prefers-color-scheme: dark)";

/** TensorBoard's page around this iframe, when it can be read; else null. */
function tensorBoardDocument() {
  try {
    if (window.parent === window) return null;
    const doc = window.parent.document;
    // TensorBoard's app has an element that keeps the body's class in step with its theme setting.
    return doc && doc.body && doc.querySelector("dark-mode-supporter") ? doc : null;
  } catch {
    return null; // another origin
  }
}

/** "dark" or "light", as TensorBoard (or, without it, the browser) shows things now. */
export function currentTheme() {
  const doc = tensorBoardDocument();
  if (doc) return doc.body.classList.contains(DARK_CLASS) ? "dark" : "light";
  return window.matchMedia && window.matchMedia(MEDIA).matches ? "dark" : "light";
}

/** Put `theme` on the page: `data-theme` on <html> selects the CSS custom properties. */
function apply(theme) {
  document.documentElement.dataset.theme = theme;
}

/**
 * Show the current theme and follow its changes: `onChange(theme)` is called after each change has
 * been applied to the page. Returns the theme shown now.
 */
export function followTheme(onChange) {
  let shown = currentTheme();
  apply(shown);
  const check = () => {
    const theme = currentTheme();
    if (theme === shown) return;
    shown = theme;
    apply(theme);
    onChange(theme);
  };
  const doc = tensorBoardDocument();
  if (doc) new MutationObserver(check).observe(doc.body, { attributes: true, attributeFilter: ["class"] });
  // Without TensorBoard's page the browser's setting decides; with it, TensorBoard's class does, and
  // this check only confirms it (TensorBoard reads the browser's setting when it loads).
  if (window.matchMedia) window.matchMedia(MEDIA).addEventListener("change", check);
  return shown;
}

function number(text, fallback) {
  const value = Number.parseFloat(text);
  return Number.isFinite(value) ? value : fallback;
}

/** The charts' colors and opacities for the theme shown now, from the page's CSS custom properties. */
export function chartTheme() {
  const style = getComputedStyle(document.documentElement);
  const read = (name) => style.getPropertyValue(name).trim();
  return {
    paper: read("--chart-bg"),
    plot: read("--chart-bg"),
    grid: read("--chart-grid"),
    text: read("--chart-text"),
    hoverBg: read("--hover-bg"),
    hoverBorder: read("--hover-border"),
    hoverText: read("--hover-text"),
    modebar: read("--modebar"),
    modebarActive: read("--modebar-active"),
    bandOpacity: number(read("--band-opacity"), 0.2),
    runOpacity: number(read("--run-opacity"), 0.28),
    along: read("--along") || "#5f6368",
    alongShade: number(read("--along-shade"), 0.1),
    alongStrip: number(read("--along-strip"), 0.75),
  };
}
