// The status page's live updates: the server's events (/events) carry
// /api/status once a second and /api/scores when the boards change; when
// no stream is to be had (the server's cap on streams, or a proxy that
// buffers), the page polls both instead. Everything is written as text:
// names never become markup.
"use strict";
(function () {
  const pollEvery = 5000;

  function text(id, value) {
    const el = document.getElementById(id);
    if (el && el.textContent !== String(value)) el.textContent = value;
  }

  function row(cells, rankClass) {
    const tr = document.createElement("tr");
    cells.forEach(function (c, i) {
      const td = document.createElement("td");
      td.textContent = c;
      if (i === 0 && rankClass) td.className = rankClass;
      tr.appendChild(td);
    });
    return tr;
  }

  function fill(id, rows, empty) {
    const table = document.getElementById(id);
    if (!table) return;
    const body = document.createElement("tbody");
    rows.forEach(function (r) { body.appendChild(r); });
    if (rows.length === 0 && empty) {
      const tr = document.createElement("tr");
      const td = document.createElement("td");
      td.colSpan = 3;
      td.textContent = empty;
      tr.appendChild(td);
      body.appendChild(tr);
    }
    table.replaceChild(body, table.tBodies[0]);
  }

  function onStatus(s) {
    text("players", s.players);
    text("spectators", s.spectators);
    text("bots", s.bots);
    text("updated", s.updated);
    document.title = "snaked: " + s.players + " playing";
    fill("top", s.top.map(function (e) {
      return row([e.rank, (e.bot ? "~" : "") + e.name, e.length], "r" + e.rank);
    }), "nobody is playing");
    const img = document.getElementById("minimap");
    if (img && img.getAttribute("src") !== s.minimap) img.setAttribute("src", s.minimap);
  }

  function onScores(s) {
    const line = function (e) { return row([e.rank, e.name, e.best]); };
    fill("all-time", s.all_time.map(line), "no games yet");
    fill("today", s.today.map(line), "no games yet");
    const off = document.getElementById("scores-off");
    if (off) off.hidden = s.available;
  }

  function get(url, then) {
    fetch(url, { cache: "no-store" })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (j) { if (j) then(j); })
      .catch(function () {});
  }

  let polling = false;
  function poll() {
    if (polling) return;
    polling = true;
    const once = function () {
      get("/api/status", onStatus);
      get("/api/scores", onScores);
    };
    once();
    setInterval(once, pollEvery);
  }

  if (!window.EventSource) {
    poll();
    return;
  }
  const es = new EventSource("/events");
  es.addEventListener("status", function (m) { onStatus(JSON.parse(m.data)); });
  es.addEventListener("scores", function (m) { onScores(JSON.parse(m.data)); });
  es.onerror = function () {
    // A stream the server ended reconnects by itself; one it refused
    // (too many streams) is closed for good: poll instead.
    if (es.readyState === EventSource.CLOSED) poll();
  };
})();
