// Plotly.js is served by the plugin from the installed plotly package (never from a CDN). It is a
// classic script that sets window.Plotly, so it is loaded with a <script> tag (same origin: allowed
// by TensorBoard's content security policy).

let loading = null;

/** Resolve with window.Plotly, loading ./plotly.min.js once. */
export function loadPlotly() {
  if (window.Plotly) return Promise.resolve(window.Plotly);
  if (loading) return loading;
  loading = new Promise((resolve, reject) => {
    const script = document.createElement("script");
    script.src = new URL("./plotly.min.js", import.meta.url).href;
    script.async = true;
    script.onload = () => {
      if (window.Plotly) resolve(window.Plotly);
      else reject(new Error("plotly.min.js loaded but did not define Plotly"));
    };
    script.onerror = () => {
      loading = null; // allow a retry on the next refresh
      reject(new Error("Could not load the chart library (static/plotly.min.js): is the plotly package installed?"));
    };
    document.head.appendChild(script);
  });
  return loading;
}
