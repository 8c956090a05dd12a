// GlossoBench view: sorting and search on every table, and a keyboard pager.
// Everything works without it; it only reorders and hides rows the server sent.
// The URL's hash keeps a table's sort and search, so a sorted view is a link:
// #sort=<column heading> (a leading - sorts descending) and &find=<text>.
"use strict";

function hashParams() {
  return new URLSearchParams(location.hash.replace(/^#/, ""));
}

function setHash(key, value) {
  const p = hashParams();
  if (value) p.set(key, value); else p.delete(key);
  history.replaceState(null, "", "#" + p.toString());
}

function cellValue(td) {
  const v = td.dataset.value !== undefined ? td.dataset.value : td.textContent.trim();
  const n = parseFloat(v.replace(/[,\s]/g, ""));
  return isNaN(n) || !/^[-+]?[\d.,\s]+(e[-+]?\d+)?$/i.test(v) ? v.toLowerCase() : n;
}

function compare(a, b) {
  const an = typeof a === "number", bn = typeof b === "number";
  if (an && bn) return a - b;
  if (an) return -1; // numbers before text ("–" for none)
  if (bn) return 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

function sortTable(table, col, desc) {
  const body = table.tBodies[0];
  if (!body) return;
  const rows = Array.from(body.rows).filter(r => r.cells.length > col);
  const keyed = rows.map((r, i) => [cellValue(r.cells[col]), i, r]);
  keyed.sort((x, y) => (desc ? -compare(x[0], y[0]) : compare(x[0], y[0])) || x[1] - y[1]);
  keyed.forEach(k => body.appendChild(k[2]));
  table.querySelectorAll("thead th").forEach((th, i) => {
    th.setAttribute("aria-sort", i === col ? (desc ? "descending" : "ascending") : "none");
  });
}

function filterTable(table, text) {
  const needle = text.trim().toLowerCase();
  let shown = 0;
  for (const body of table.tBodies) {
    for (const r of body.rows) {
      const keep = !needle || r.textContent.toLowerCase().includes(needle);
      r.hidden = !keep;
      if (keep) shown++;
    }
  }
  table.dataset.shown = shown;
}

function setUpTable(table) {
  const heads = Array.from(table.querySelectorAll("thead th"));
  if (!heads.length || !table.tBodies.length) return;
  heads.forEach((th, col) => {
    th.tabIndex = 0;
    th.classList.add("sorter");
    th.title = th.title || "sort by " + th.textContent.trim();
    const go = () => {
      const desc = th.getAttribute("aria-sort") === "ascending";
      sortTable(table, col, desc);
      setHash("sort", (desc ? "-" : "") + th.textContent.trim());
    };
    th.addEventListener("click", go);
    th.addEventListener("keydown", e => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); go(); } });
  });
  const find = document.createElement("input");
  find.type = "search";
  find.className = "table-find";
  find.placeholder = "search this table";
  find.setAttribute("aria-label", "search this table");
  find.addEventListener("input", () => { filterTable(table, find.value); setHash("find", find.value); });
  table.before(find);
  const p = hashParams();
  const want = p.get("sort");
  if (want) {
    const desc = want.startsWith("-");
    const name = desc ? want.slice(1) : want;
    const col = heads.findIndex(th => th.textContent.trim() === name);
    if (col >= 0) sortTable(table, col, desc);
  }
  if (p.get("find")) { find.value = p.get("find"); filterTable(table, find.value); }
}

// The pager: n / → next page, p / ← previous page, j / k next and previous
// item, / the search box.
function setUpKeys() {
  let at = -1;
  document.addEventListener("keydown", e => {
    const t = e.target;
    if (e.ctrlKey || e.metaKey || e.altKey || t.tagName === "INPUT" || t.tagName === "SELECT" || t.tagName === "TEXTAREA") return;
    const go = sel => { const a = document.querySelector(sel); if (a) location.href = a.href; };
    const items = document.querySelectorAll("article.item");
    switch (e.key) {
      case "n": case "ArrowRight": go("a#next"); break;
      case "p": case "ArrowLeft": go("a#prev"); break;
      case "j": case "k":
        if (!items.length) return;
        at = Math.max(0, Math.min(items.length - 1, at + (e.key === "j" ? 1 : -1)));
        items.forEach((it, i) => it.classList.toggle("current", i === at));
        items[at].scrollIntoView({block: "start"});
        break;
      case "/": {
        const q = document.querySelector("#filters input[name=q]") || document.querySelector("input.table-find");
        if (q) { e.preventDefault(); q.focus(); }
        break;
      }
      default: return;
    }
  });
}

document.querySelectorAll("table").forEach(setUpTable);
setUpKeys();
