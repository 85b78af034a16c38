/* Tether inspector: lays out the run payload embedded in this page. Every stored string is
   rendered with textContent (through el()), never as markup; nothing is fetched. */
(function () {
  "use strict";
  var DATA = JSON.parse(document.getElementById("tether-data").textContent);
  var ROW = 30, PAGE = 60, FOLD = 2000;
  var FIELDS = ["state", "conversation_manager_state", "interrupt_state", "system_prompt", "model_state"];
  var LABELS = { state: "Agent state", conversation_manager_state: "Conversation-manager state", interrupt_state: "Interrupt state", system_prompt: "System prompt", model_state: "Model state" };
  var IMAGE_TYPES = { png: "png", jpeg: "jpeg", jpg: "jpeg", gif: "gif", webp: "webp" };

  var run = null, selected = 0, shownFrom = 0, tab = "conversation", derived = null;

  function el(tag, props) {
    var node = document.createElement(tag);
    if (props) {
      Object.keys(props).forEach(function (key) {
        var value = props[key];
        if (value === undefined || value === null) return;
        if (key === "class") node.className = value;
        else if (key === "text") node.textContent = String(value);
        else if (key.slice(0, 2) === "on") node.addEventListener(key.slice(2), value);
        else node.setAttribute(key, String(value));
      });
    }
    for (var i = 2; i < arguments.length; i++) append(node, arguments[i]);
    return node;
  }
  function append(node, child) {
    if (child === null || child === undefined || child === false) return;
    if (Array.isArray(child)) { child.forEach(function (c) { append(node, c); }); return; }
    node.append(typeof child === "string" || typeof child === "number" ? document.createTextNode(String(child)) : child);
  }
  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); return node; }
  function $(id) { return document.getElementById(id); }
  function pretty(value) { return JSON.stringify(value, null, 2); }
  function num(n) { return (n || 0).toLocaleString("en-US"); }
  function ms(n) { return n === undefined || n === null ? "?" : n < 10 ? n.toFixed(2) + " ms" : n < 1000 ? n.toFixed(0) + " ms" : (n / 1000).toFixed(2) + " s"; }
  function bytes(n) { return n < 1024 ? n + " B" : n < 1048576 ? (n / 1024).toFixed(1) + " KiB" : (n / 1048576).toFixed(2) + " MiB"; }
  function clock(iso) { return typeof iso === "string" && iso.length >= 19 ? iso.slice(11, 23) : ""; }

  /* ---------- derived data of one run ---------- */
  function derive(r) {
    var full = [], sizes = [], prevFull = {}, prevSizes = {}, maxDur = 0;
    r.steps.forEach(function (s) {
      var f = Object.assign({}, prevFull, s.changed), z = Object.assign({}, prevSizes, s.sizes);
      full.push(f); sizes.push(z); prevFull = f; prevSizes = z;
      maxDur = Math.max(maxDur, duration(s) || 0);
    });
    var index = new Map(), prefix = [0], names = new Map();
    r.messages.forEach(function (m, i) {
      index.set(m.seq, i); prefix.push(prefix[i] + m.bytes);
      (m.message.content || []).forEach(function (b) { if (b && b.toolUse) names.set(b.toolUse.toolUseId, b.toolUse.name); });
    });
    return { full: full, sizes: sizes, maxDur: maxDur, index: index, prefix: prefix, names: names, search: new Map() };
  }
  function duration(s) {
    var total = 0, any = false;
    if (s.model && typeof s.model.latency_ms === "number") { total += s.model.latency_ms; any = true; }
    (s.tools || []).forEach(function (t) { if (typeof t.duration_ms === "number") { total += t.duration_ms; any = true; } });
    return any ? total : null;
  }
  function windowOf(s) {
    // The indexes in run.messages of the messages the run held at step s: seq in [start_seq, next_seq).
    var lo = 0, hi = run.messages.length;
    while (lo < hi) { var mid = (lo + hi) >> 1; if (run.messages[mid].seq < s.start_seq) lo = mid + 1; else hi = mid; }
    var end = lo;
    while (end < run.messages.length && run.messages[end].seq < s.next_seq) end++;
    return [lo, end];
  }

  /* ---------- header and run picker ---------- */
  function selectRun(id, step) {
    run = DATA.runs[id];
    derived = derive(run);
    $("run-select").value = id;
    clear($("run-title")).append(id);
    var s = run.summary, u = s.usage || {};
    clear($("summary"));
    append($("summary"), [
      el("span", null, "status ", statusBadge(s.status)),
      el("span", null, "turns ", el("b", { text: s.turns })),
      el("span", null, "cycles ", el("b", { text: s.cycles })),
      el("span", null, "steps ", el("b", { text: run.steps.length })),
      el("span", null, "messages ", el("b", { text: num(run.messages.length) })),
      el("span", null, "tokens ", el("b", { text: num(u.input_tokens) + " in / " + num(u.output_tokens) + " out" })),
      el("span", null, "created ", el("b", { text: (s.created_at || "-").replace("T", " ").slice(0, 19) })),
      s.stop_reason ? el("span", null, "stop ", el("b", { text: s.stop_reason })) : null,
      s.parent_run_id ? el("span", null, "nested in ", runLink(s.parent_run_id)) : null,
      run.graph ? el("span", null, run.graph.kind + " ", el("b", { text: run.graph.nodes.length + " nodes · " + run.graph.log.length + " executions" })) : null
    ]);
    var graphTab = document.querySelector('.tabs button[data-tab="graph"]');
    graphTab.hidden = !run.graph;
    if (run.graph && tab === "conversation") tab = "graph";
    else if (!run.graph && tab === "graph") tab = "conversation";
    document.querySelectorAll(".tabs button").forEach(function (b) { b.setAttribute("aria-selected", b.dataset.tab === tab ? "true" : "false"); });
    document.querySelectorAll(".tab").forEach(function (t) { t.hidden = t.id !== "tab-" + tab; });
    var spacer = clear($("timeline"));
    spacer.append(el("div", { style: "height:" + run.steps.length * ROW + "px" }));
    var at = typeof step === "number" ? run.steps.findIndex(function (x) { return x.step === step; }) : -1;
    select(at >= 0 ? at : run.steps.length - 1, true);
    if (DATA.live && s.status === "running") setTimeout(function () { location.reload(); }, 2000);
  }
  function runLink(id) {
    if (!DATA.runs[id]) return el("code", { text: id });
    return el("a", { class: "runlink", tabindex: 0, text: id, onclick: function () { selectRun(id); }, onkeydown: function (e) { if (e.key === "Enter") selectRun(id); } });
  }
  function statusBadge(status) {
    var kind = { finished: "ok", completed: "ok", running: "info", executing: "info", failed: "error", interrupted: "doubt", stopped: "doubt", paused: "doubt", stalled: "doubt", corrupt: "error" }[status] || "muted";
    return el("span", { class: "badge " + kind, text: status });
  }

  /* ---------- timeline (virtualised: only the visible rows exist) ---------- */
  var pendingFrame = 0;
  function drawTimeline() {
    pendingFrame = 0;
    var box = $("timeline"), spacer = box.firstChild;
    var first = Math.max(0, Math.floor(box.scrollTop / ROW) - 8);
    var last = Math.min(run.steps.length, Math.ceil((box.scrollTop + box.clientHeight) / ROW) + 8);
    while (spacer.nextSibling) box.removeChild(spacer.nextSibling);
    var rows = document.createDocumentFragment();
    for (var i = first; i < last; i++) rows.append(stepRow(i));
    box.append(rows);
  }
  function stepRow(i) {
    var s = run.steps[i], d = duration(s);
    var row = el("div", {
      class: "row" + (i === selected ? " selected" : "") + (s.boundary ? " boundary" : ""),
      style: "top:" + i * ROW + "px", role: "option", "aria-selected": i === selected ? "true" : "false",
      "data-step": s.step, title: s.boundary ? "process boundary: " + s.boundary : null, onclick: function () { select(i); $("timeline").focus({ preventScroll: true }); }
    });
    var what = [];
    // the dashed line marks every boundary; a resumed or forked step's position already names it
    if (s.boundary && s.position !== "resumed" && s.position !== "forked") what.push(el("span", { class: "badge boundary", text: s.boundary }));
    if (s.model) what.push(el("span", { text: "model " }));
    var tools = s.tools || [];
    if (tools.length <= 3) {
      tools.forEach(function (t) {
        what.push(el("span", { class: "tool-name", text: t.name + " " }));
        what.push(el("span", { class: "badge " + (t.error ? "error" : "ok"), text: t.error ? "error" : "ok" }));
        if (t.in_doubt) what.push(el("span", { class: "badge doubt", text: "in doubt, re-run" }));
      });
    } else {
      // many parallel calls: one entry per tool name, with counts
      var groups = new Map();
      tools.forEach(function (t) {
        var g = groups.get(t.name) || { n: 0, error: 0, doubt: 0 };
        g.n++; if (t.error) g.error++; if (t.in_doubt) g.doubt++;
        groups.set(t.name, g);
      });
      groups.forEach(function (g, name) {
        what.push(el("span", { class: "tool-name", text: name + " ×" + g.n + " " }));
        if (g.n > g.error) what.push(el("span", { class: "badge ok", text: (g.n - g.error) + " ok" }));
        if (g.error) what.push(el("span", { class: "badge error", text: g.error + " error" }));
        if (g.doubt) what.push(el("span", { class: "badge doubt", text: g.doubt + " in doubt, re-run" }));
      });
    }
    (s.in_doubt || []).forEach(function (m) { what.push(el("span", { class: "badge doubt", text: "in doubt: " + m.name + " → " + m.action })); });
    if (s.forked_from) what.push(el("span", { class: "badge info", text: "forked from " + s.forked_from.run_id + " @" + s.forked_from.step }));
    if (s.position === "undo" && s.undo) {
      // a compensation step: one call undone (or its compensation failed)
      what.push(el("span", { class: "tool-name", text: "undo " + s.undo.name + " " }));
      what.push(el("span", { class: "badge " + (s.undo.outcome === "undone" ? "ok" : "error"), text: s.undo.outcome === "undone" ? "undone" : "failed: " + s.undo.error }));
      if (s.undo.redo) what.push(el("span", { class: "badge doubt", text: "undo in doubt, re-run" }));
    }
    if (s.position === "unwound") what.push(el("span", { class: "badge info", text: s.status }));
    if (s.position === "turn_start") what.push(el("span", { class: "label", text: "prompt" }));
    if (s.position === "turn_end") {
      what.push(statusBadge(s.status));
      if (s.stop_reason) what.push(el("span", { class: "label", text: s.stop_reason }));
    }
    var bar = el("div", { class: "dur", title: d === null ? "no timing" : ms(d) });
    if (d !== null && derived.maxDur > 0) bar.append(el("i", { style: "width:" + Math.max(2, (100 * d) / derived.maxDur).toFixed(1) + "%" }));
    row.append(
      el("span", { class: "num", text: s.step }),
      el("span", { class: "pos", text: s.position }),
      titled(el("span", { class: "what" }, what)),
      s.model ? el("span", { class: "tok", title: "tokens in / out", text: num(s.model.input_tokens) + "/" + num(s.model.output_tokens) }) : bar,
      el("span", { class: "clock", title: s.created_at, text: clock(s.created_at) })
    );
    return row;
  }
  function titled(node) { node.title = node.textContent; return node; }
  function select(i, center) {
    if (!run.steps.length) { renderDetail(); return; }
    selected = Math.max(0, Math.min(run.steps.length - 1, i));
    shownFrom = -1;
    var box = $("timeline"), top = selected * ROW;
    if (center) box.scrollTop = Math.max(0, top - box.clientHeight / 2);
    else if (top < box.scrollTop) box.scrollTop = top;
    else if (top + ROW > box.scrollTop + box.clientHeight) box.scrollTop = top + ROW - box.clientHeight;
    drawTimeline();
    try { history.replaceState(null, "", "#run=" + encodeURIComponent(run.run_id) + "&step=" + run.steps[selected].step); } catch (e) { /* file: pages may refuse */ }
    renderDetail();
  }

  /* ---------- detail tabs ---------- */
  function renderDetail() {
    if (tab === "graph") renderGraph();
    else if (tab === "conversation") renderConversation();
    else if (tab === "step") renderStep();
    else if (tab === "size") renderSize();
    else if (tab === "usage") renderUsage();
    else renderRelated();
  }
  function showTab(name) {
    tab = name;
    document.querySelectorAll(".tabs button").forEach(function (b) { b.setAttribute("aria-selected", b.dataset.tab === name ? "true" : "false"); });
    document.querySelectorAll(".tab").forEach(function (t) { t.hidden = t.id !== "tab-" + name; });
    renderDetail();
  }

  /* conversation: the messages at the selected step, the last PAGE first, searchable */
  function searchText(i) {
    var text = derived.search.get(i);
    if (text === undefined) { text = JSON.stringify(run.messages[i].message).toLowerCase(); derived.search.set(i, text); }
    return text;
  }
  function renderConversation() {
    var box = clear($("conversation"));
    if (!run.steps.length) { box.append(el("p", { class: "empty", text: "This run has no steps." })); return; }
    var w = windowOf(run.steps[selected]), query = $("search").value.trim().toLowerCase();
    var picked = [];
    for (var i = w[0]; i < w[1]; i++) if (!query || searchText(i).indexOf(query) >= 0) picked.push(i);
    $("search-count").textContent = query ? picked.length + " of " + (w[1] - w[0]) + " messages match" : (w[1] - w[0]) + " messages at step " + run.steps[selected].step;
    if (shownFrom < 0 || shownFrom > picked.length) shownFrom = Math.max(0, picked.length - PAGE);
    if (shownFrom > 0) box.append(el("button", { class: "more", text: "Show " + Math.min(PAGE, shownFrom) + " earlier of " + shownFrom, onclick: function () { shownFrom = Math.max(0, shownFrom - PAGE); renderConversation(); } }));
    picked.slice(shownFrom).forEach(function (i) { box.append(messageCard(run.messages[i], query)); });
    if (!picked.length) box.append(el("p", { class: "empty", text: query ? "No message matches." : run.graph ? "A " + run.graph.kind + " run has no conversation: its node executions are in the Graph tab, each with its own run." : "No messages yet at this step." }));
  }
  function messageCard(m, query) {
    var role = m.message.role || "?";
    var card = el("article", { class: "msg " + role + (query ? " hit" : "") },
      el("div", { class: "msg-head" }, el("span", { class: "role", text: role }), el("span", { text: "#" + m.seq }), el("span", { text: bytes(m.bytes) })));
    var content = m.message.content;
    if (!Array.isArray(content)) content = [content];
    content.forEach(function (b) { card.append(blockOf(b)); });
    return card;
  }
  function folded(text, cls, tag) {
    tag = tag || "div";
    if (text.length <= FOLD) return el(tag, { class: cls, text: text });
    return el("div", null, el(tag, { class: cls, text: text.slice(0, FOLD) + "…" }),
      el("details", null, el("summary", { text: "show all " + num(text.length) + " characters" }), el(tag, { class: cls, text: text })));
  }
  function preOf(value) { var text = pretty(value); return folded(text === undefined ? String(value) : text, null, "pre"); }
  function imageOf(image) {
    var fmt = IMAGE_TYPES[String(image.format || "").toLowerCase()], data = image.source && image.source.bytes && image.source.bytes.$b64;
    if (fmt && typeof data === "string" && /^[A-Za-z0-9+/=\s]*$/.test(data)) return el("img", { class: "shown", alt: "image (" + fmt + ")", src: "data:image/" + fmt + ";base64," + data.replace(/\s/g, "") });
    return el("div", { class: "label", text: "image (" + String(image.format) + ", not shown)" });
  }
  function blockOf(b) {
    if (b === null || typeof b !== "object") return el("div", { class: "block" }, preOf(b));
    if (typeof b.text === "string") return el("div", { class: "block" }, folded(b.text, "text"));
    if (b.toolUse) return el("div", { class: "block" }, el("div", { class: "label" }, "tool call ", el("span", { class: "tool-name", text: b.toolUse.name }), " · " + b.toolUse.toolUseId), preOf(b.toolUse.input));
    if (b.toolResult) {
      var r = b.toolResult, node = el("div", { class: "block" + (r.status === "error" ? " error" : "") },
        el("div", { class: "label" }, "result of ", el("span", { class: "tool-name", text: derived.names.get(r.toolUseId) || "?" }), " · " + r.toolUseId + " · ", el("span", { class: "badge " + (r.status === "error" ? "error" : "ok"), text: r.status || "ok" })));
      (r.content || []).forEach(function (part) {
        if (typeof part.text === "string") node.append(folded(part.text, "text"));
        else if (part.json !== undefined) node.append(preOf(part.json));
        else if (part.image) node.append(imageOf(part.image));
        else node.append(preOf(part));
      });
      return node;
    }
    if (b.reasoningContent) {
      var rc = b.reasoningContent, text = rc.reasoningText && rc.reasoningText.text;
      return el("div", { class: "block" }, el("details", null, el("summary", { text: "reasoning" }), typeof text === "string" ? el("div", { class: "text", text: text }) : el("div", { class: "label", text: "(redacted)" })));
    }
    if (b.image) return el("div", { class: "block" }, imageOf(b.image));
    if (b.document) return el("div", { class: "block" }, el("div", { class: "label", text: "document " + (b.document.name || "") + " (" + (b.document.format || "?") + ")" }));
    return el("div", { class: "block" }, el("div", { class: "label", text: Object.keys(b).join(", ") }), preOf(b));
  }

  /* step state: time travel to the selected step */
  function diffLines(before, after, path, out) {
    if (out.length > 400) return out;
    var same = JSON.stringify(before) === JSON.stringify(after);
    if (same) return out;
    var objects = before && after && typeof before === "object" && typeof after === "object" && Array.isArray(before) === Array.isArray(after);
    if (!objects) {
      if (before === undefined) out.push(["add", "+ " + path + ": " + JSON.stringify(after)]);
      else if (after === undefined) out.push(["del", "- " + path + ": " + JSON.stringify(before)]);
      else out.push(["chg", "~ " + path + ": " + JSON.stringify(before) + " → " + JSON.stringify(after)]);
      return out;
    }
    var keys = Array.from(new Set(Object.keys(before).concat(Object.keys(after))));
    keys.forEach(function (k) { diffLines(before[k], after[k], path + (Array.isArray(after) ? "[" + k + "]" : "." + k), out); });
    return out;
  }
  function renderStep() {
    var box = clear($("tab-step"));
    if (!run.steps.length) return;
    var s = run.steps[selected], now = derived.full[selected], prev = selected > 0 ? derived.full[selected - 1] : null;
    var w = windowOf(s);
    box.append(el("h3", { text: "Step " + s.step + " · " + s.position }));
    box.append(el("p", null, "cycle " + s.cycle_index + " · " + (s.created_at || "").replace("T", " ") + " · status ", statusBadge(s.status),
      " · messages " + (w[1] - w[0]) + " (seq " + s.start_seq + "–" + (s.next_seq - 1) + ")"));
    var code = el("code", { text: s.fork_command });
    var copy = el("button", { text: "Copy", onclick: function () {
      var done = function () { copy.textContent = "Copied"; };
      if (navigator.clipboard && navigator.clipboard.writeText) navigator.clipboard.writeText(s.fork_command).then(done, function () { selectText(code); });
      else selectText(code);
    } });
    box.append(el("h3", { text: "Fork from here" }), el("div", { class: "cmd" }, code, copy));
    box.append(el("h3", { text: prev ? "Changes since step " + run.steps[selected - 1].step : "State at the first step" }));
    var diff = el("div", { class: "diff", id: "state-diff" }), lines = [];
    FIELDS.forEach(function (f) { diffLines(prev ? prev[f] : undefined, now[f], f, lines); });
    if (!lines.length) diff.append(el("div", { text: "no change to state, conversation-manager state, interrupt state, system prompt or model state" }));
    lines.forEach(function (l) { diff.append(el("div", { class: l[0], text: l[1] })); });
    box.append(diff);
    FIELDS.forEach(function (f) { box.append(el("h3", { text: LABELS[f] }), el("pre", { class: "state-" + f, text: f === "system_prompt" && typeof now[f] === "string" ? now[f] : pretty(now[f] === undefined ? null : now[f]) })); });
    if (s.tools && s.tools.length) {
      var t = el("table", null, el("tr", null, el("th", { text: "tool" }), el("th", { text: "id" }), el("th", { class: "n", text: "duration" }), el("th", { text: "status" })));
      s.tools.forEach(function (c) { t.append(el("tr", null, el("td", { class: "tool-name", text: c.name }), el("td", { text: c.toolUseId }), el("td", { class: "n", text: ms(c.duration_ms) }), el("td", { text: (c.error ? "error" : "ok") + (c.in_doubt ? ", in doubt (re-run)" : "") }))); });
      box.append(el("h3", { text: "Tool calls" }), t);
    }
  }
  function selectText(node) { var r = document.createRange(); r.selectNodeContents(node); var sel = getSelection(); sel.removeAllRanges(); sel.addRange(r); }

  /* size: bytes per field and the largest messages, at the selected step */
  function renderSize() {
    var box = clear($("tab-size"));
    if (!run.steps.length) return;
    var s = run.steps[selected], w = windowOf(s), n = w[1] - w[0], z = derived.sizes[selected];
    var fields = [["messages", 2 + derived.prefix[w[1]] - derived.prefix[w[0]] + Math.max(0, n - 1)]];
    FIELDS.forEach(function (f) { fields.push([f, z[f] || 0]); });
    fields.sort(function (a, b) { return b[1] - a[1]; });
    var total = fields.reduce(function (a, f) { return a + f[1]; }, 0), top = fields[0][1] || 1;
    box.append(el("h3", { text: "Bytes per field at step " + s.step + " (compact JSON, as tether size counts)" }));
    var t = el("table", { id: "size-fields" }, el("tr", null, el("th", { text: "field" }), el("th", { class: "n", text: "bytes" }), el("th", { style: "width:40%" })));
    fields.forEach(function (f) { t.append(el("tr", null, el("td", { text: f[0] }), el("td", { class: "n", text: num(f[1]) }), el("td", null, el("div", { class: "sizebar", style: "width:" + ((100 * f[1]) / top).toFixed(1) + "%" })))); });
    t.append(el("tr", null, el("th", { text: "total of these fields" }), el("th", { class: "n", text: num(total) }), el("th")));
    box.append(t);
    var order = [];
    for (var i = w[0]; i < w[1]; i++) order.push(i);
    order.sort(function (a, b) { return run.messages[b].bytes - run.messages[a].bytes || a - b; });
    var m = el("table", null, el("tr", null, el("th", { text: "seq" }), el("th", { text: "role" }), el("th", { class: "n", text: "bytes" })));
    order.slice(0, 10).forEach(function (i) { var x = run.messages[i]; m.append(el("tr", null, el("td", { text: "#" + x.seq }), el("td", { text: x.message.role }), el("td", { class: "n", text: num(x.bytes) }))); });
    box.append(el("h3", { text: "Largest messages" }), m);
  }

  /* usage: totals and per-cycle tokens and latency (inline SVG) */
  function renderUsage() {
    var box = clear($("tab-usage")), u = run.summary.usage || {}, tools = run.summary.tools || {};
    var calls = run.steps.filter(function (s) { return s.model; });
    var latency = calls.reduce(function (a, s) { return a + (s.model.latency_ms || 0); }, 0);
    box.append(el("h3", { text: "Totals" }), el("p", null,
      num(u.input_tokens) + " input tokens · " + num(u.output_tokens) + " output tokens · " + num(u.total_tokens) + " total · " + calls.length + " model calls · " + ms(latency) + " model time"));
    box.append(el("h3", { text: "Per model call: tokens (bars) and latency (line)" }), chart(calls));
    var t = el("table", null, el("tr", null, el("th", { text: "tool" }), el("th", { class: "n", text: "calls" }), el("th", { class: "n", text: "errors" }), el("th", { class: "n", text: "total time" })));
    Object.keys(tools).forEach(function (name) { var x = tools[name]; t.append(el("tr", null, el("td", { class: "tool-name", text: name }), el("td", { class: "n", text: x.calls }), el("td", { class: "n", text: x.errors }), el("td", { class: "n", text: ms(x.total_duration_ms) }))); });
    box.append(el("h3", { text: "Tools" }), Object.keys(tools).length ? t : el("p", { class: "empty", text: "no tool calls" }));
  }
  function chart(calls) {
    var NS = "http://www.w3.org/2000/svg", W = 640, H = 120, B = Math.min(calls.length, 240);
    function svg(tag, attrs) { var n = document.createElementNS(NS, tag); Object.keys(attrs).forEach(function (k) { n.setAttribute(k, String(attrs[k])); }); return n; }
    var root = svg("svg", { viewBox: "0 0 " + W + " " + (H + 20), width: "100%", style: "max-width:" + W + "px", role: "img", "aria-label": "tokens and latency per model call" });
    if (!B) { root.append(svg("text", { x: 4, y: 14 })); root.lastChild.textContent = "no model calls"; return root; }
    var buckets = [];
    for (var b = 0; b < B; b++) buckets.push({ tokens: 0, latency: 0, n: 0 });
    calls.forEach(function (s, i) { var x = buckets[Math.floor((i * B) / calls.length)]; x.tokens += (s.model.input_tokens || 0) + (s.model.output_tokens || 0); x.latency += s.model.latency_ms || 0; x.n++; });
    var maxT = Math.max.apply(null, buckets.map(function (x) { return x.tokens; })) || 1, maxL = Math.max.apply(null, buckets.map(function (x) { return x.latency; })) || 1, bw = Math.min(W / B, 28);
    var points = [];
    buckets.forEach(function (x, i) {
      var h = (H * x.tokens) / maxT;
      root.append(svg("rect", { x: (i * bw).toFixed(2), y: (H - h).toFixed(2), width: Math.max(0.5, bw - 1).toFixed(2), height: h.toFixed(2), fill: "var(--bar)" }));
      points.push((i * bw + bw / 2).toFixed(2) + "," + (H - (H * x.latency) / maxL).toFixed(2));
    });
    root.append(svg("polyline", { points: points.join(" "), fill: "none", stroke: "var(--bar2)", "stroke-width": 1.5 }));
    var label = svg("text", { x: 2, y: H + 14 });
    label.textContent = "max " + num(maxT) + " tokens, " + ms(maxL) + (calls.length > B ? " (per " + Math.ceil(calls.length / B) + " calls)" : "");
    root.append(label);
    return root;
  }

  /* graph: a graph or swarm run's nodes and edges (layered from the entry points), then each
     node execution in the order it started, linked to the nested run that executed it */
  function layout(g) {
    var depth = {}, queue = [];
    (g.entry_points.length ? g.entry_points : g.nodes.length ? [g.nodes[0].id] : []).forEach(function (id) { depth[id] = 0; queue.push(id); });
    while (queue.length) {
      var id = queue.shift();
      g.edges.forEach(function (e) { if (e.source === id && !(e.target in depth)) { depth[e.target] = depth[id] + 1; queue.push(e.target); } });
    }
    var deepest = Object.keys(depth).reduce(function (a, k) { return Math.max(a, depth[k]); }, 0);
    g.nodes.forEach(function (n) { if (!(n.id in depth)) depth[n.id] = ++deepest; });
    var rows = {}, at = {};
    g.nodes.forEach(function (n) { var d = depth[n.id]; rows[d] = (rows[d] || 0) + 1; at[n.id] = { col: d, row: rows[d] - 1 }; });
    return at;
  }
  function latestRun(g, id) {
    var found = null;
    g.log.forEach(function (e) { if (e.node === id && e.run_id) found = e.run_id; });
    return found;
  }
  function graphSvg(g) {
    var NS = "http://www.w3.org/2000/svg", W = 150, H = 46, GX = 70, GY = 22, at = layout(g);
    function svg(tag, attrs) { var n = document.createElementNS(NS, tag); Object.keys(attrs || {}).forEach(function (k) { n.setAttribute(k, String(attrs[k])); }); return n; }
    var cols = 0, rows = 0;
    Object.keys(at).forEach(function (k) { cols = Math.max(cols, at[k].col + 1); rows = Math.max(rows, at[k].row + 1); });
    var width = cols * (W + GX) - GX + 20, height = rows * (H + GY) - GY + 40;
    var root = svg("svg", { class: "graph-svg", viewBox: "0 0 " + width + " " + height, width: width, role: "img", "aria-label": g.kind + " of " + g.nodes.length + " nodes" });
    function box(id) { var p = at[id]; return { x: 10 + p.col * (W + GX), y: 20 + p.row * (H + GY) }; }
    g.edges.forEach(function (e) {
      if (!at[e.source] || !at[e.target]) return;
      var a = box(e.source), b = box(e.target), d, head;
      if (at[e.target].col > at[e.source].col) {
        var ty = b.y + H / 2;
        d = "M" + (a.x + W) + "," + (a.y + H / 2) + " C" + (a.x + W + GX / 2) + "," + (a.y + H / 2) + " " + (b.x - GX / 2) + "," + ty + " " + (b.x - 7) + "," + ty;
        head = b.x + "," + ty + " " + (b.x - 8) + "," + (ty - 4) + " " + (b.x - 8) + "," + (ty + 4);
      } else { // back to an earlier column (a cycle, a handoff back): over the top
        var tx = b.x + W / 2 + (e.source === e.target ? 12 : 0);
        d = "M" + (a.x + W / 2) + "," + a.y + " C" + (a.x + W / 2) + "," + (a.y - 18) + " " + tx + "," + (b.y - 18) + " " + tx + "," + (b.y - 7);
        head = tx + "," + b.y + " " + (tx - 4) + "," + (b.y - 8) + " " + (tx + 4) + "," + (b.y - 8);
      }
      var path = svg("path", { class: "edge " + e.kind, d: d });
      root.append(svg("polygon", { class: "arrow", points: head }));
      var title = svg("title"); title.textContent = e.source + " → " + e.target + (e.kind === "edge" ? "" : " (" + e.kind + ")"); path.append(title);
      root.append(path);
    });
    g.nodes.forEach(function (n) {
      var p = box(n.id), child = latestRun(g, n.id), linked = child && DATA.runs[child];
      var group = svg("g", { class: "node " + n.status + (linked ? " linked" : ""), "data-node": n.id });
      if (linked) group.setAttribute("tabindex", "0");
      group.append(svg("rect", { x: p.x, y: p.y, width: W, height: H, rx: 7 }));
      var name = svg("text", { class: "name", x: p.x + 10, y: p.y + 19 }); name.textContent = n.id.length > 18 ? n.id.slice(0, 17) + "…" : n.id;
      var sub = svg("text", { class: "sub", x: p.x + 10, y: p.y + 35 }); sub.textContent = n.status + " · " + n.executions + "×";
      var tip = svg("title"); tip.textContent = n.id + (linked ? ": open its latest run " + child : "");
      group.append(name, sub, tip);
      if (linked) {
        group.addEventListener("click", function () { selectRun(child); });
        group.addEventListener("keydown", function (ev) { if (ev.key === "Enter") selectRun(child); });
      }
      root.append(group);
    });
    return root;
  }
  function renderGraph() {
    var box = clear($("tab-graph")), g = run.graph;
    if (!g) { box.append(el("p", { class: "empty", text: "Not a graph or swarm run." })); return; }
    box.append(el("h3", { text: g.kind === "swarm" ? "Swarm: members and handoffs" : "Graph: nodes and edges" }));
    box.append(el("p", null, "status ", statusBadge(g.status), g.error ? el("span", { class: "label", text: " " + g.error }) : null));
    if (g.task) box.append(el("div", { class: "block" }, el("div", { class: "label", text: "task" }), folded(g.task, "text")));
    box.append(graphSvg(g));
    var edges = el("ul", { class: "edges", id: "graph-edges" });
    g.edges.forEach(function (e) { edges.append(el("li", { text: e.source + " → " + e.target + (e.kind === "edge" ? "" : " (" + e.kind + ")") })); });
    box.append(el("h3", { text: g.kind === "swarm" ? "Handoffs" : "Edges" }), g.edges.length ? edges : el("p", { class: "empty", text: "none" }));
    var t = el("table", { id: "graph-executions" }, el("tr", null, el("th", { text: "started" }), el("th", { text: "node" }), el("th", { class: "n", text: "execution" }), el("th", { text: "status" }), el("th", { class: "n", text: "order" }), el("th", { class: "n", text: "tokens" }), el("th", { text: "run" })));
    g.log.forEach(function (e, i) {
      t.append(el("tr", { "data-node": e.node },
        el("td", { class: "n", text: i + 1 }), el("td", { class: "tool-name", text: e.node }), el("td", { class: "n", text: e.n }),
        el("td", null, statusBadge(e.status)), el("td", { class: "n", text: e.done === null ? "-" : "#" + e.done }),
        el("td", { class: "n", text: e.total_tokens === null ? "-" : num(e.total_tokens) }),
        el("td", null, e.run_id ? runLink(e.run_id) : el("span", { class: "empty", text: "no run (callable node)" }))));
    });
    box.append(el("h3", { text: "Node executions (" + g.log.length + ")" }), g.log.length ? t : el("p", { class: "empty", text: "none yet" }));
  }

  function renderRelated() {
    var box = clear($("tab-related")), s = run.summary;
    box.append(el("h3", { text: "Parent run" }), s.parent_run_id ? el("p", null, runLink(s.parent_run_id)) : el("p", { class: "empty", text: "none (a top-level run)" }));
    box.append(el("h3", { text: "Nested runs" }));
    if (run.children.length) { var ul = el("ul"); run.children.forEach(function (id) { ul.append(el("li", null, runLink(id), " ", statusBadge(DATA.runs[id] ? DATA.runs[id].summary.status : "?"))); }); box.append(ul); }
    else box.append(el("p", { class: "empty", text: "none" }));
    box.append(el("h3", { text: "Forks" }));
    if (run.forks.length) { var fl = el("ul"); run.forks.forEach(function (f) { fl.append(el("li", null, runLink(f.run_id), " forked at step " + f.step)); }); box.append(fl); }
    else box.append(el("p", { class: "empty", text: run.run_id === DATA.root ? "none" : "(forks are listed for the page's own run)" }));
  }

  /* ---------- wiring ---------- */
  function init() {
    if (DATA.format !== "tether-inspector/1") { document.body.textContent = "Unknown inspector data format."; return; }
    var picker = $("run-select");
    Object.keys(DATA.runs).forEach(function (id) { picker.append(el("option", { value: id, text: id === DATA.root ? id : "↳ " + id })); });
    picker.parentNode.hidden = Object.keys(DATA.runs).length < 2;
    picker.addEventListener("change", function () { selectRun(picker.value); });
    document.querySelectorAll(".tabs button").forEach(function (b) { b.addEventListener("click", function () { showTab(b.dataset.tab); }); });
    $("search").addEventListener("input", function () { shownFrom = -1; renderConversation(); });
    $("timeline").addEventListener("scroll", function () { if (!pendingFrame) pendingFrame = requestAnimationFrame(drawTimeline); });
    window.addEventListener("resize", function () { if (!pendingFrame) pendingFrame = requestAnimationFrame(drawTimeline); });
    document.addEventListener("keydown", function (e) {
      var t = e.target;
      if (t && (t.tagName === "INPUT" || t.tagName === "SELECT" || t.tagName === "TEXTAREA")) return;
      var moves = { ArrowDown: 1, j: 1, ArrowUp: -1, k: -1, PageDown: 10, PageUp: -10 };
      if (e.key in moves) { select(selected + moves[e.key]); e.preventDefault(); }
      else if (e.key === "Home") { select(0); e.preventDefault(); }
      else if (e.key === "End") { select(run.steps.length - 1); e.preventDefault(); }
    });
    var params = new URLSearchParams(location.hash.slice(1)), wanted = params.get("run"), step = parseInt(params.get("step"), 10);
    selectRun(wanted && DATA.runs[wanted] ? wanted : DATA.root, isNaN(step) ? undefined : step);
  }
  init();
})();
