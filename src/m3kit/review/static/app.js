// m3kit review: one page over the app's JSON API. No framework, no build step.
"use strict";

const $ = (id) => document.getElementById(id);
const state = { list: [], index: -1, item: null, decision: null, span: null };

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (key === "class") node.className = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value);
  }
  for (const child of children) node.append(child);
  return node;
}

async function api(path, body) {
  const init = body === undefined ? {} : {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
  };
  const reply = await fetch(path, init);
  const data = await reply.json().catch(() => ({}));
  if (!reply.ok) {
    const detail = typeof data.detail === "string" ? data.detail : JSON.stringify(data.detail);
    throw new Error(detail || reply.statusText);
  }
  return data;
}

function say(text, isError) {
  $("status").textContent = text;
  $("status").className = isError ? "error" : "";
}

function showProgress(p) {
  $("progress").textContent =
    `${p.reviewed} reviewed of ${p.total} (accepted ${p.accepted}, rejected ${p.rejected})`;
  $("progress").dataset.reviewed = p.reviewed;
  $("progress").dataset.total = p.total;
}

function renderList() {
  const nav = $("list");
  nav.replaceChildren();
  state.list.forEach((entry, n) => {
    nav.append(el("div", {
      class: "entry" + (n === state.index ? " current" : ""), "data-id": entry.id,
      onclick: () => openItem(n),
    }, el("span", { class: "badge " + entry.verdict,
                    ...(entry.stale ? { title: entry.reason } : {}) },
          entry.stale ? "pending*" : entry.verdict),
       el("span", { class: "text", title: entry.question }, `${entry.id}. ${entry.question}`)));
  });
  const current = nav.children[state.index];
  if (current) current.scrollIntoView({ block: "nearest" });
}

async function loadList() {
  const data = await api("/api/items");
  state.list = data.items;
  $("benchmark").textContent = `${data.benchmark}: ${data.root}`;
  if (!$("reviewer").value) $("reviewer").value = data.reviewer;
  showProgress(data.progress);
  renderList();
}

// -- media -------------------------------------------------------------------------------------

function mediaUrl(path) {
  return "/media/" + path.split("/").map(encodeURIComponent).join("/");
}

function playSpan(n) {
  const spans = state.item ? state.item.media.filter((m) => m.kind === "video") : [];
  const media = spans[n];
  if (!media) return;
  const player = $("player");
  state.span = media;
  document.querySelectorAll("#spans button").forEach((b, k) => b.classList.toggle("playing", k === n));
  const start = () => {
    player.currentTime = media.start || 0;
    player.play().catch((err) => say(`cannot play: ${err.message}`, true));
  };
  const url = mediaUrl(media.path);
  if (player.getAttribute("src") !== url) {
    player.setAttribute("src", url);
    player.load();
  }
  // a seek before the metadata is there is lost: wait for it
  if (player.readyState >= HTMLMediaElement.HAVE_METADATA) start();
  else player.addEventListener("loadedmetadata", start, { once: true });
}

function stopAtSpanEnd() {
  const player = $("player");
  const span = state.span;
  if (span && span.end != null && !player.paused && player.currentTime >= span.end - 0.03) {
    player.pause();
    if (player.currentTime > span.end) player.currentTime = span.end;
    state.span = null;
  }
  if (!player.paused) requestAnimationFrame(stopAtSpanEnd);
}

function renderMedia(item) {
  const player = $("player");
  player.pause();
  state.span = null;
  const videos = item.media.filter((m) => m.kind === "video");
  player.hidden = videos.length === 0;
  if (videos.length) {
    const url = mediaUrl(videos[0].path);
    if (player.getAttribute("src") !== url) { player.setAttribute("src", url); player.load(); }
    const cue = () => { player.currentTime = videos[0].start || 0; };  // the first span's start
    if (player.readyState >= HTMLMediaElement.HAVE_METADATA) cue();
    else player.addEventListener("loadedmetadata", cue, { once: true });
  } else {
    player.removeAttribute("src");
  }
  $("spans").replaceChildren(...videos.map((m, n) => el("button", {
    type: "button", "data-span": n, "data-start": m.start, "data-end": m.end,
    onclick: () => playSpan(n),
  }, `${n + 1} ▶ ${m.label}`)));
  if (!item.media.length) $("spans").append(el("em", {}, "no media: the evidence is text"));
  $("images").replaceChildren(...item.media.filter((m) => m.kind !== "video").map((m) => {
    const src = m.kind === "pdf_page" ? `/pdf/${m.path}?page=${m.page || 0}` : mediaUrl(m.path);
    return el("figure", {}, el("img", { src, alt: m.label }), el("figcaption", {}, m.label));
  }));
}

// -- the item ------------------------------------------------------------------------------------

function editedValue(original, edited) {
  return edited === undefined || edited === null ? original : edited;
}

function renderItem(item, decision) {
  const edit = (decision && decision.edit) || { options: {} };
  const verdict = decision ? decision.verdict : "pending";
  $("item-id").textContent = `#${item.id}`;
  $("item-group").textContent = item.group;
  $("item-verdict").textContent = verdict + (decision && decision.reason ? `: ${decision.reason}` : "")
    + (decision ? ` (${decision.reviewer}, ${decision.at})` : "");
  $("item-verdict").className = "badge " + verdict;
  $("question").value = editedValue(item.question, edit.question);
  const gold = editedValue(item.answer, edit.answer);
  $("options").replaceChildren(...item.options.map((o) => el("div", { class: "option" },
    el("input", { type: "radio", name: "gold", value: o.letter, title: "the gold answer",
                  ...(o.letter === gold ? { checked: "" } : {}) }),
    el("strong", {}, o.letter),
    el("span", { class: "badge " + o.role }, o.role),
    el("input", { type: "text", "data-letter": o.letter,
                  value: editedValue(o.text, (edit.options || {})[o.letter]) }))));
  if (item.options.length) {
    $("gold").textContent = `gold: ${item.answer}` +
      (edit.answer ? ` (edited to ${edit.answer})` : "");
  } else {  // an open question (M3Exam): the gold answer itself is edited
    $("gold").replaceChildren(el("label", { for: "answer" }, "Answer"),
      el("input", { id: "answer", type: "text", value: editedValue(item.answer, edit.answer) }));
  }
  $("reason").value = decision && decision.verdict === "rejected" ? decision.reason : "";
  $("evidence").replaceChildren(...item.evidence.map((e) => el("li", {}, e)));
  $("checks").replaceChildren(...(item.checks.length ? item.checks.map((c) => {
    const kind = c.passed === true ? "passed" : c.passed === false ? "failed" : "pending";
    const score = c.score == null ? "" : ` ${c.score.toFixed(2)}`;
    return el("li", { class: "check" }, el("span", { class: "badge " + kind }, kind + score),
              " ", el("strong", {}, c.name), c.rationale ? `: ${c.rationale}` : "");
  }) : [el("li", {}, "none recorded")]));
  $("facts").replaceChildren(...item.facts.map(([k, v]) => el("tr", {}, el("td", {}, k),
                                                                el("td", {}, v))));
  renderMedia(item);
}

async function openItem(n) {
  if (n < 0 || n >= state.list.length) return;
  state.index = n;
  const data = await api(`/api/items/${encodeURIComponent(state.list[n].id)}`);
  state.item = data.item;
  state.decision = data.decision;
  renderItem(data.item, data.decision);
  renderList();
  say("");
}

function currentEdit() {
  const item = state.item;
  const edit = { options: {} };
  const question = $("question").value;
  if (question !== item.question) edit.question = question;
  document.querySelectorAll("#options input[type=text]").forEach((input) => {
    const original = item.options.find((o) => o.letter === input.dataset.letter);
    if (original && input.value !== original.text) edit.options[input.dataset.letter] = input.value;
  });
  const gold = document.querySelector("#options input[name=gold]:checked");
  if (gold && gold.value !== item.answer) edit.answer = gold.value;
  const answer = $("answer");
  if (answer && answer.value !== item.answer) edit.answer = answer.value;
  return edit;
}

async function decide(verdict, { advance } = { advance: true }) {
  if (!state.item) return;
  const reason = $("reason").value.trim();
  if (verdict === "rejected" && !reason) {
    say("a rejection needs a reason: type it, then Enter", true);
    $("reason").focus();
    return;
  }
  try {
    const reply = await api(`/api/items/${encodeURIComponent(state.item.id)}/decision`, {
      verdict, reason, edit: currentEdit(), reviewer: $("reviewer").value.trim() || null,
    });
    state.decision = reply.decision;
    const entry = state.list[state.index];
    entry.verdict = reply.decision.verdict;
    entry.reason = reply.decision.reason;
    entry.stale = false;
    showProgress(reply.progress);
    renderList();
    say(`saved: ${reply.decision.verdict} by ${reply.decision.reviewer}`);
    if (advance && state.index + 1 < state.list.length) await openItem(state.index + 1);
    else renderItem(state.item, state.decision);
  } catch (err) {
    say(err.message, true);
  }
}

function saveEdit() {
  const verdict = state.decision ? state.decision.verdict : "pending";
  return decide(verdict, { advance: false });
}

async function exportSet() {
  const out = $("export-result");
  out.className = "";
  out.textContent = "exporting…";
  try {
    const r = await api("/api/export", {});
    out.textContent = `exported ${r.exported} to ${r.out}; loaded ${r.loaded}, ` +
      `skipped ${r.skipped.length} (rejected ${r.rejected}, pending ${r.pending})`;
    out.dataset.exported = r.exported;
    out.dataset.loaded = r.loaded;
    out.dataset.skipped = r.skipped.length;
    if (r.skipped.length) out.className = "error";
  } catch (err) {
    out.textContent = `export failed: ${err.message}`;
    out.className = "error";
  }
}

// -- keys ----------------------------------------------------------------------------------------

function onKey(event) {
  const target = event.target;
  const typing = target instanceof HTMLInputElement && target.type !== "radio"
    || target instanceof HTMLTextAreaElement;
  if ((event.ctrlKey || event.metaKey) && event.key.toLowerCase() === "s") {
    event.preventDefault();
    saveEdit();
    return;
  }
  if (typing) {
    if (event.key === "Escape") target.blur();
    else if (event.key === "Enter" && target.id === "reason") { event.preventDefault(); decide("rejected"); }
    return;
  }
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  if (event.key === "a") { event.preventDefault(); decide("accepted"); }
  else if (event.key === "r") { event.preventDefault(); $("reason").focus(); }
  else if (event.key === "j") openItem(state.index + 1);
  else if (event.key === "k") openItem(state.index - 1);
  else if (/^[1-9]$/.test(event.key)) playSpan(Number(event.key) - 1);
}

function start() {
  $("accept").addEventListener("click", () => decide("accepted"));
  $("reject").addEventListener("click", () => decide("rejected"));
  $("save").addEventListener("click", saveEdit);
  $("export").addEventListener("click", exportSet);
  $("player").addEventListener("play", () => requestAnimationFrame(stopAtSpanEnd));
  $("player").addEventListener("timeupdate", stopAtSpanEnd);
  document.addEventListener("keydown", onKey);
  loadList().then(() => openItem(0)).catch((err) => say(err.message, true));
}

start();
