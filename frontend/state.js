// The tab's settings and their place in the URL.
//
// Inside TensorBoard the tab lives in an iframe whose own URL is rebuilt on every load, so the
// settings go into the TensorBoard page's hash, under TensorBoard's convention for plugin data:
// `#aggregate&p.aggregate.band=sem&p.aggregate.smoothing=0.6`. A reload or a shared link restores
// them. Opened on its own (no parent page), the tab uses its own hash with the same keys.

const PREFIX = "p.aggregate.";

/** Engine options (sent to the backend) and view options (only change the drawing). */
export const DEFAULTS = Object.freeze({
  runs: "",
  tags: "",
  group_by: "auto",
  center: "mean",
  band: "std",
  smoothing: 0,
  x: "step",
  min_runs: 1,
  log_y: false,
  show_runs: false,
  compare_tag: "",
  compare_a: "",
  compare_b: "",
});

/** The options the backend's engine understands, in the order they are sent. */
export const ENGINE_OPTIONS = ["runs", "tags", "group_by", "center", "band", "smoothing", "x", "min_runs"];

/** The window whose hash holds the settings: TensorBoard's page when reachable, else this one. */
export function hashWindow() {
  try {
    if (window.parent !== window && window.parent.location.href) return window.parent;
  } catch {
    // A parent page from another origin cannot be read: keep the settings in our own hash.
  }
  return window;
}

function splitHash(hash) {
  return hash.replace(/^#/, "").split("&").filter((part) => part.length > 0);
}

function coerce(key, raw) {
  const fallback = DEFAULTS[key];
  if (typeof fallback === "boolean") return raw === "1" || raw === "true";
  if (key === "smoothing") {
    const value = Number(raw);
    return Number.isFinite(value) ? value : raw; // a bad value is sent on, the backend says what is wrong
  }
  if (key === "min_runs") {
    const value = Number(raw);
    return Number.isInteger(value) ? value : raw;
  }
  return raw;
}

/** Read the settings from the URL hash; anything missing takes its default. */
export function readState(win = hashWindow()) {
  const state = { ...DEFAULTS };
  for (const part of splitHash(win.location.hash)) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    let key;
    let value;
    try {
      key = decodeURIComponent(part.slice(0, eq));
      value = decodeURIComponent(part.slice(eq + 1));
    } catch {
      continue; // a malformed escape: ignore that one part
    }
    if (!key.startsWith(PREFIX)) continue;
    key = key.slice(PREFIX.length);
    if (key in DEFAULTS) state[key] = coerce(key, value);
  }
  return state;
}

/** Whether the hash holds any of the tab's settings. */
export function hashHasState(win = hashWindow()) {
  return splitHash(win.location.hash).some((part) => decodeURIComponentSafe(part).startsWith(PREFIX));
}

function decodeURIComponentSafe(text) {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function encodeValue(value) {
  if (typeof value === "boolean") return value ? "1" : "0";
  return encodeURIComponent(String(value));
}

/**
 * Write the settings that differ from the defaults into the hash, keeping every part that is not
 * ours (TensorBoard's tab name and other plugins' data) in place. Replaces the history entry, so
 * moving a slider does not fill the back button.
 */
export function writeState(state, win = hashWindow()) {
  const kept = splitHash(win.location.hash).filter((part) => !decodeURIComponentSafe(part).startsWith(PREFIX));
  if (win !== window && kept.length === 0) kept.push("aggregate");
  const ours = Object.keys(DEFAULTS)
    .filter((key) => state[key] !== DEFAULTS[key] && state[key] !== undefined)
    .map((key) => `${PREFIX}${key}=${encodeValue(state[key])}`);
  const hash = [...kept, ...ours].join("&");
  const url = new URL(win.location.href);
  url.hash = hash;
  if (url.href !== win.location.href) win.history.replaceState(win.history.state, "", url.href);
}

/** URLSearchParams with every engine option of `state` (sent explicitly, so what is drawn is what was asked). */
export function engineParams(state, extra = {}) {
  const params = new URLSearchParams();
  for (const key of ENGINE_OPTIONS) params.set(key, String(state[key]));
  for (const [key, value] of Object.entries(extra)) {
    if (value !== undefined && value !== null && value !== "") params.set(key, String(value));
  }
  return params;
}
