/* tether serve: the chat page. Reads a run's event stream (GET /runs/{id}/events) with fetch()
   and a streaming body, so the same code sends the bearer token when the server has one and
   reconnects with Last-Event-ID after a dropped connection or a server restart. Every string from
   the server (model text, tool inputs and results, errors) is rendered with textContent, never as
   markup; a committed event whose id is not after the last one rendered is dropped, so none is
   shown twice. */
(function () {
  "use strict";

  var TOKEN_KEY = "tether-serve-token";
  var DELAYS = [250, 500, 1000, 2000]; // reconnect backoff, ms (the last one repeats, with jitter)
  var RETRYABLE = ["failed", "stopped", "paused"]; // a run at rest that POST /runs/{id}/retry takes on again
  var HANDED_OVER = "handed over"; // the status shown for a run a server stopped at shutdown: the next server goes on with it

  var state = {
    token: null,
    run: null, // the run shown
    lastId: null, // the last committed event id rendered ("STEP.INDEX")
    status: null, // the run's last status
    handedOver: false, // its server shut down and handed it over: the page waits for the next server
    controller: null, // aborts the open stream
    timer: null, // the pending reconnect
    attempt: 0,
    tools: new Map(), // toolUseId -> tool card
    pending: new Map(), // interrupt id -> {item, card, answer}
    live: null, // the bubble of a model reply in flight (live deltas)
    logged: 0,
  };

  function $(id) { return document.getElementById(id); }
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
    node.append(typeof child === "string" ? document.createTextNode(child) : child);
  }
  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); return node; }
  function pretty(value) { return typeof value === "string" ? value : JSON.stringify(value, null, 2); }
  function path(runId, rest) { return "/runs/" + encodeURIComponent(runId) + (rest || ""); }

  /* -- the server --------------------------------------------------------------------------- */

  function headers(extra) {
    var out = Object.assign({}, extra || {});
    if (state.token) out.Authorization = "Bearer " + state.token;
    return out;
  }

  async function errorOf(response) {
    try {
      var body = await response.json();
      if (body && body.error && typeof body.error.message === "string") return body.error.message;
    } catch (e) { /* not JSON */ }
    return "HTTP " + response.status;
  }

  /* A JSON request; a 401 asks for the token and throws. */
  async function call(url, options) {
    options = options || {};
    var init = { method: options.method || "GET", headers: headers(options.body ? { "Content-Type": "application/json" } : {}), cache: "no-store" };
    if (options.body) init.body = JSON.stringify(options.body);
    var response = await fetch(url, init);
    if (response.status === 401) { askToken(); throw new Error(await errorOf(response)); }
    if (!response.ok) throw new Error(await errorOf(response));
    return response.json();
  }

  function notice(text) {
    var node = $("notice");
    node.textContent = text || "";
    node.hidden = !text;
  }

  function setConn(name, text) {
    var node = $("conn");
    node.dataset.state = name;
    node.textContent = text;
  }

  /* -- the token ---------------------------------------------------------------------------- */

  function readToken() {
    var params = new URLSearchParams(location.hash.slice(1));
    var given = params.get("token");
    if (given) { // #token=T: kept for this tab, then taken out of the address bar and history
      try { sessionStorage.setItem(TOKEN_KEY, given); } catch (e) { /* storage refused: this page load only */ }
      params.delete("token");
      history.replaceState(null, "", location.pathname + location.search + (params.toString() ? "#" + params.toString() : ""));
      return given;
    }
    try { return sessionStorage.getItem(TOKEN_KEY); } catch (e) { return null; }
  }

  function askToken() {
    $("token-form").hidden = false;
    $("token").focus();
    setConn("error", "the server needs its token");
  }

  $("token-form").addEventListener("submit", function (event) {
    event.preventDefault();
    state.token = $("token").value.trim() || null;
    try { if (state.token) sessionStorage.setItem(TOKEN_KEY, state.token); } catch (e) { /* this page load only */ }
    $("token").value = "";
    $("token-form").hidden = true;
    setConn("idle", "");
    loadAgents().then(function () { if (state.run) connect(); });
  });

  /* -- agents and prompts ------------------------------------------------------------------- */

  async function loadAgents() {
    try {
      var body = await call("/agents");
      var select = clear($("agent"));
      body.agents.forEach(function (name) { select.append(el("option", { value: name, text: name })); });
      notice("");
    } catch (e) {
      notice("could not list the agents: " + e.message);
    }
  }

  $("prompt-form").addEventListener("submit", function (event) {
    event.preventDefault();
    send();
  });
  $("prompt").addEventListener("keydown", function (event) {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) { event.preventDefault(); send(); }
  });

  async function send() {
    var prompt = $("prompt").value;
    var agent = $("agent").value;
    if (!prompt.trim() || !agent) return;
    if (state.run && state.status !== "finished") { // a new prompt needs a finished turn
      var what = RETRYABLE.indexOf(state.status) >= 0 ? "Retry it" : "answer it or wait for it";
      notice("run " + state.run + " is " + (state.status || "starting") + ": " + what + ", or start a New chat");
      return;
    }
    var body = { prompt: prompt };
    var sameRun = state.run && state.status === "finished" && state.agent === agent;
    if (sameRun) body.run_id = state.run; // a new turn of the finished run
    $("send").disabled = true;
    try {
      var started = await call("/agents/" + encodeURIComponent(agent) + "/runs", { method: "POST", body: body });
      $("prompt").value = "";
      notice("");
      if (!sameRun) show(started.run_id, agent);
      else connect();
    } catch (e) {
      notice("could not start the run: " + e.message);
    } finally {
      $("send").disabled = false;
    }
  }

  /* A failed (or stopped) run goes on from its last stored step: the server resumes it (no
     recorded call is made again) and the page follows its stream after the last id it rendered. */
  $("retry").addEventListener("click", async function () {
    if (!state.run) return;
    var button = $("retry");
    button.disabled = true;
    try {
      await call(path(state.run, "/retry"), { method: "POST" });
      notice("");
      setStatus("running");
      connect();
    } catch (e) {
      notice("the retry was refused: " + e.message);
    } finally {
      button.disabled = false;
    }
  });

  $("new-chat").addEventListener("click", function () {
    stop();
    state.run = null;
    reset();
    $("run-bar").hidden = true;
    $("agent").disabled = false;
    setConn("idle", "");
    history.replaceState(null, "", location.pathname + location.search);
  });

  /* -- a run -------------------------------------------------------------------------------- */

  function reset() {
    clear($("conversation"));
    clear($("log-list"));
    state.logged = 0;
    $("log-count").textContent = "0";
    state.lastId = null;
    state.status = null;
    state.handedOver = false;
    state.tools = new Map();
    state.pending = new Map();
    state.live = null;
  }

  /* Show run ``runId`` (from its first event) and follow its stream. */
  function show(runId, agent) {
    stop();
    reset();
    state.run = runId;
    state.agent = agent || null;
    if (agent) $("agent").value = agent;
    $("agent").disabled = true;
    $("run-bar").hidden = false;
    $("run-id").textContent = runId;
    setStatus("");
    var link = $("view-link");
    link.href = path(runId, "/view");
    link.hidden = !!state.token; // a new tab cannot send the token: the Inspector button can
    history.replaceState(null, "", "#run=" + encodeURIComponent(runId));
    connect();
    if (!agent) { // opened from the address (#run=ID): which agent it is, for a new turn
      call(path(runId)).then(function (run) {
        if (state.run !== runId || !run.agent) return;
        state.agent = run.agent;
        $("agent").value = run.agent;
      }).catch(function () { /* the stream reports a missing run */ });
    }
  }

  function setStatus(status) {
    state.status = status || null;
    var badge = $("run-status");
    badge.dataset.status = status || "";
    badge.textContent = status || "…";
    $("retry").hidden = RETRYABLE.indexOf(status) < 0;
  }

  function stop() {
    if (state.timer !== null) { clearTimeout(state.timer); state.timer = null; }
    if (state.controller) { state.controller.abort(); state.controller = null; }
  }

  /* Open the run's event stream after the last committed event rendered; on a dropped connection
     (a server restart, a network hiccup) open it again with the same cursor, backing off. */
  async function connect() {
    stop();
    var controller = new AbortController();
    state.controller = controller;
    var runId = state.run;
    setConn("connecting", state.attempt ? "reconnecting (attempt " + state.attempt + ")…" : "connecting…");
    var ended = false;
    try {
      var extra = { Accept: "text/event-stream" };
      if (state.lastId) extra["Last-Event-ID"] = state.lastId;
      var response = await fetch(path(runId, "/events"), { headers: headers(extra), signal: controller.signal, cache: "no-store" });
      if (response.status === 401) { askToken(); state.controller = null; return; }
      if (response.status >= 400 && response.status < 500) { // the run or the cursor is refused: retrying changes nothing
        fatal(await errorOf(response));
        return;
      }
      if (!response.ok) throw new Error("HTTP " + response.status);
      state.attempt = 0;
      setConn("live", "live");
      ended = await read(response.body);
    } catch (e) {
      /* the connection failed or dropped: below */
    }
    if (controller.signal.aborted || state.controller !== controller) return; // replaced or stopped
    state.controller = null;
    if (ended && !state.handedOver) { setConn("closed", "stream closed: the run is " + (state.status || "at rest")); return; }
    dropLive();
    var delay = DELAYS[Math.min(state.handedOver ? DELAYS.length - 1 : state.attempt, DELAYS.length - 1)] * (0.8 + 0.4 * Math.random());
    state.attempt += 1;
    if (state.handedOver) setConn("reconnecting", "handed over: waiting for the next server to go on with the run…");
    else setConn("reconnecting", "connection lost; reconnecting (attempt " + state.attempt + ")…");
    state.timer = setTimeout(function () { state.timer = null; connect(); }, delay);
  }

  function fatal(message) {
    state.controller = null;
    setConn("error", "stream refused");
    notice(message);
  }

  /* Parse Server-Sent Events from ``body``; true when the stream said ``end`` (the run is at rest). */
  async function read(body) {
    var reader = body.getReader();
    var decoder = new TextDecoder();
    var buffer = "";
    var fields = { type: "message", id: null, data: [] };
    for (;;) {
      var chunk = await reader.read();
      if (chunk.done) return false;
      buffer += decoder.decode(chunk.value, { stream: true });
      var at;
      while ((at = buffer.indexOf("\n")) >= 0) {
        var line = buffer.slice(0, at);
        buffer = buffer.slice(at + 1);
        if (line.slice(-1) === "\r") line = line.slice(0, -1);
        if (line === "") {
          if (fields.data.length) {
            var done = dispatch(fields.type, fields.id, fields.data.join("\n"));
            if (done) { reader.cancel().catch(function () { /* closed already */ }); return true; }
          }
          fields = { type: "message", id: null, data: [] };
          continue;
        }
        if (line.charAt(0) === ":") continue; // a keepalive comment
        var colon = line.indexOf(":");
        var name = colon < 0 ? line : line.slice(0, colon);
        var value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
        if (name === "event") fields.type = value;
        else if (name === "id") fields.id = value;
        else if (name === "data") fields.data.push(value);
      }
    }
  }

  /* Whether committed id ``a`` comes after ``b`` (both "STEP.INDEX"). */
  function after(a, b) {
    if (b === null) return true;
    var x = a.split(".").map(Number), y = b.split(".").map(Number);
    return x[0] !== y[0] ? x[0] > y[0] : x[1] > y[1];
  }

  /* One event; true when the stream is over. */
  function dispatch(type, id, text) {
    var data;
    try { data = JSON.parse(text); } catch (e) { return false; }
    if (id) {
      if (!/^\d+\.\d+$/.test(id) || !after(id, state.lastId)) return false; // rendered already: never twice
      state.lastId = id;
      log(id, type);
    }
    var view = RENDER[type];
    if (view) view(data, id);
    follow();
    return type === "end" || (type === "error" && data.status !== 503);
  }

  function log(id, type) {
    $("log-list").append(el("li", { "data-id": id, "data-type": type, text: id + " " + type }));
    state.logged += 1;
    $("log-count").textContent = String(state.logged);
  }

  /* Keep the newest content in view when the reader is at the bottom already. */
  function follow() {
    var main = document.querySelector("main");
    if (main.scrollHeight - main.scrollTop - main.clientHeight < 160) main.scrollTop = main.scrollHeight;
  }

  function add(node) { $("conversation").append(node); return node; }

  function liveBubble() {
    if (!state.live) {
      state.live = add(el("div", { class: "msg assistant live" }, el("span", { class: "who", text: "assistant (typing)" }), el("span", { class: "reasoning" }), el("span", { class: "text" })));
    }
    return state.live;
  }

  function dropLive() {
    if (state.live) { state.live.remove(); state.live = null; }
  }

  function textOf(blocks) {
    return (blocks || []).filter(function (b) { return b && typeof b.text === "string"; }).map(function (b) { return b.text; }).join("");
  }

  function partsOf(content) {
    return (content || []).map(function (part) {
      if (!part || typeof part !== "object") return String(part);
      if (typeof part.text === "string") return part.text;
      if ("json" in part) return JSON.stringify(part.json, null, 2);
      if (part.image) return "[image " + (part.image.format || "") + "]";
      if (part.document) return "[document " + (part.document.name || "") + "]";
      return "[" + Object.keys(part)[0] + "]";
    }).join("\n");
  }

  function toolCard(toolUseId, name) {
    var card = state.tools.get(toolUseId);
    if (!card) {
      card = add(el("div", { class: "tool", "data-tool-use-id": toolUseId, "data-state": "running" },
        el("div", { class: "title" }, el("span", { class: "name", text: "tool " + (name || "?") }), el("span", { class: "state", text: "running…" }))));
      state.tools.set(toolUseId, card);
    }
    return card;
  }

  var RENDER = {
    status: function (data) {
      if (data.status === "stopped") return; // the result (or end) that follows says why: handed over, or stopped
      state.handedOver = false; // running again (taken over), or at rest otherwise
      setStatus(data.status);
      if (data.status !== "interrupted") settle(true);
    },
    message: function (data, id) {
      var blocks = Array.isArray(data.content) ? data.content : [];
      var text = textOf(blocks);
      var reasoning = blocks.filter(function (b) { return b && b.reasoningContent && b.reasoningContent.reasoningText; })
        .map(function (b) { return b.reasoningContent.reasoningText.text || ""; }).join("\n");
      var other = blocks.filter(function (b) { return b && typeof b === "object" && !("text" in b) && !b.toolUse && !b.toolResult && !b.reasoningContent && !b.interruptResponse; });
      if (data.role === "assistant") dropLive(); // the committed reply supersedes its live deltas
      if (!text && !reasoning && !other.length) return; // tool calls and results have their own cards
      var bubble = el("div", { class: "msg " + (data.role === "user" ? "user" : "assistant"), "data-seq": data.seq, "data-id": id },
        el("span", { class: "who", text: data.role }));
      if (reasoning) bubble.append(el("div", { class: "reasoning", text: reasoning }));
      if (text) bubble.append(el("span", { class: "text", text: text }));
      other.forEach(function (b) { bubble.append(el("div", { class: "part", text: "[" + Object.keys(b)[0] + "]" })); });
      add(bubble);
    },
    tool_call_start: function (data) {
      var card = toolCard(data.toolUseId, data.name);
      card.append(el("div", { class: "part", text: "input" }), el("pre", { class: "input", text: pretty(data.input === undefined ? null : data.input) }));
    },
    tool_call_end: function (data) {
      var card = toolCard(data.toolUseId, data.name);
      var ok = data.status !== "error";
      card.dataset.state = ok ? "success" : "error";
      card.querySelector(".state").textContent = ok ? "done" : "error";
      card.append(el("div", { class: "part", text: ok ? "result" : "error" }), el("pre", { class: "result", text: partsOf(data.content) }));
    },
    interrupt: function (data) { interruptCard(data); },
    in_doubt: function (data) {
      var what = { rerun: "runs again with the same idempotency key", interrupt: "is not idempotent: a human decides below", reconciled: "was reconciled" }[data.action] || data.action;
      add(el("div", { class: "note in-doubt", text: "in doubt: " + (data.name || "a tool") + " started before its server stopped and its result was not recorded; it " + what }));
    },
    result: function (data) {
      state.handedOver = data.status === "stopped" && /^handed over/.test(data.stop_reason || "");
      setStatus(state.handedOver ? HANDED_OVER : data.status);
      if (data.status === "failed") add(el("div", { class: "note error", text: "the run failed: " + (data.stop_reason || "") }));
      else if (/^handed over/.test(data.stop_reason || "")) add(el("div", { class: "note", text: data.stop_reason })); // a server shut down: the next one goes on
      else if (data.stop_reason && data.stop_reason !== "end_turn" && data.status !== "interrupted") add(el("div", { class: "note", text: "stopped: " + data.stop_reason }));
    },
    end: function (data) {
      dropLive();
      if (data.status === "deleted") notice("the run was deleted");
      else if (state.handedOver && data.status === "stopped") return; // not taken over yet: the page asks again
      else setStatus(data.status);
    },
    error: function (data) { if (data.status !== 503) fatal(data.message || "the stream failed"); }, // 503: the store is away, reconnect
    text_delta: function (data) {
      var text = liveBubble().querySelector(".text");
      text.textContent += data.text || "";
    },
    reasoning_delta: function (data) {
      var text = liveBubble().querySelector(".reasoning");
      text.textContent += data.text || "";
    },
  };

  /* -- interrupts --------------------------------------------------------------------------- */

  function interruptCard(item) {
    if (state.pending.has(item.id)) return;
    var inDoubt = item.name === "tether.in_doubt";
    var input = el("input", { type: "text", "aria-label": "answer", placeholder: inDoubt ? "the result to record (the call is not run again)" : "or type an answer" });
    var buttons = inDoubt
      ? [el("button", { type: "button", class: "primary", "data-answer": "rerun", text: "Run it again", onclick: function () { choose(item.id, "rerun"); } })]
      : [
          el("button", { type: "button", class: "primary", "data-answer": "yes", text: "Approve", onclick: function () { choose(item.id, "yes"); } }),
          el("button", { type: "button", "data-answer": "no", text: "Deny", onclick: function () { choose(item.id, "no"); } }),
        ];
    var sendText = el("button", { type: "button", text: inDoubt ? "Record result" : "Send answer", onclick: function () {
      if (input.value.trim()) choose(item.id, input.value);
    } });
    var card = add(el("div", { class: "interrupt", "data-interrupt-id": item.id },
      el("div", { class: "title", text: inDoubt ? "In doubt: " + ((item.reason && item.reason.tool) || "a tool call") : "The run asks: " + item.name }),
      item.reason === null || item.reason === undefined ? null : el("pre", { class: "reason", text: pretty(item.reason) }),
      el("div", { class: "actions" }, buttons, input, sendText)));
    state.pending.set(item.id, { item: item, card: card, answer: undefined });
  }

  /* Record one answer; once every pending interrupt has one, send them all and follow the run. */
  async function choose(id, answer) {
    var entry = state.pending.get(id);
    if (!entry) return;
    entry.answer = answer;
    entry.card.querySelectorAll("button, input").forEach(function (node) { node.disabled = true; });
    var waiting = Array.from(state.pending.values());
    if (waiting.some(function (e) { return e.answer === undefined; })) return;
    var responses = {};
    waiting.forEach(function (e) { responses[e.item.id] = e.answer; });
    try {
      await call(path(state.run, "/interrupts"), { method: "POST", body: { responses: responses } });
      settle(false);
      connect();
    } catch (e) {
      notice("the answer was refused: " + e.message);
      waiting.forEach(function (w) {
        w.answer = undefined;
        w.card.querySelectorAll("button, input").forEach(function (node) { node.disabled = false; });
      });
    }
  }

  /* The pending interrupts are answered (by this page or another client): their cards say so;
     ``done``: the run went on, so they are no longer pending. */
  function settle(done) {
    state.pending.forEach(function (entry) {
      entry.card.querySelectorAll("button, input").forEach(function (node) { node.disabled = true; });
      var text = entry.answer === undefined ? "answered" : "answered: " + pretty(entry.answer);
      var line = entry.card.querySelector(".answered") || entry.card.appendChild(el("div", { class: "answered" }));
      line.textContent = text;
      entry.card.dataset.answered = "true";
    });
    if (done) state.pending = new Map();
  }

  /* -- the inspector ------------------------------------------------------------------------ */

  $("inspect").addEventListener("click", async function () {
    if (!state.run) return;
    try {
      var response = await fetch(path(state.run, "/view"), { headers: headers(), cache: "no-store" });
      if (response.status === 401) { askToken(); return; }
      if (!response.ok) throw new Error(await errorOf(response));
      var page = await response.text();
      $("inspector-run").textContent = state.run;
      $("inspector-frame").srcdoc = page; // sandboxed: its own opaque origin, no access to this page or the token
      $("inspector").hidden = false;
    } catch (e) {
      notice("could not open the inspector: " + e.message);
    }
  });
  $("inspector-close").addEventListener("click", function () {
    $("inspector").hidden = true;
    $("inspector-frame").srcdoc = "";
  });

  /* -- start -------------------------------------------------------------------------------- */

  state.token = readToken();
  loadAgents().then(function () {
    var wanted = new URLSearchParams(location.hash.slice(1)).get("run");
    if (wanted) show(wanted, null);
  });
})();
