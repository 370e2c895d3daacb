// The Aggregate tab (placeholder until the full tab lands): lists the groups the backend sees.
export async function render() {
  const root = document.createElement("main");
  document.body.appendChild(root);
  const response = await fetch("./runs");
  const listing = await response.json();
  for (const group of Object.keys(listing.groups)) {
    const p = document.createElement("p");
    p.textContent = `${group}: ${listing.groups[group].length} runs`;
    root.appendChild(p);
  }
}
