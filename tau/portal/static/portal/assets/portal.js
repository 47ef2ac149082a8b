// The Portal single-page app: one view per board, rendered from /api/portal/* with DOM
// methods only (no HTML strings from data), so an object's name can never inject markup.
"use strict";

(function () {
  const main = document.getElementById("main");

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === undefined || value === null) continue;
      if (key === "class") node.className = value;
      else if (key === "text") node.textContent = value;
      else node.setAttribute(key, value);
    }
    for (const child of children.flat()) {
      if (child === undefined || child === null) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  function pill(text, kind) {
    return el("span", { class: "pill " + (kind || text), "data-value": text }, text);
  }

  function table(id, headers, rows) {
    if (!rows.length) return el("div", { class: "empty", id: id }, "None.");
    return el(
      "table",
      { id: id },
      el("thead", {}, el("tr", {}, headers.map((h) => el("th", {}, h)))),
      el("tbody", {}, rows.map((cells) => el("tr", {}, cells.map((c) => el("td", {}, c))))),
    );
  }

  function link(href, text) {
    const a = el("a", { href: href }, text);
    a.addEventListener("click", (event) => {
      if (href.startsWith("/portal")) {
        event.preventDefault();
        history.pushState({}, "", href);
        route();
      }
    });
    return a;
  }

  async function api(path) {
    const response = await fetch(path, { headers: { Accept: "application/json" } });
    const body = await response.json().catch(() => ({ reason: response.statusText }));
    if (!response.ok) throw new Error(body.reason || "HTTP " + response.status);
    return body;
  }

  function done() {
    document.body.dataset.ready = "true";
  }

  function fail(error) {
    main.replaceChildren(el("div", { class: "error", id: "error" }, error.message));
    done();
  }

  function setScope(scope) {
    if (!scope) return;
    document.getElementById("scope").textContent =
      "workspace " + scope.workspace + (scope.cluster ? " · cluster " + scope.cluster : "") +
      " · " + scope.namespaces.join(", ");
  }

  // -- Runs -----------------------------------------------------------------------------

  async function runsView() {
    const params = new URLSearchParams(location.search);
    const query = new URLSearchParams();
    for (const key of ["q", "state", "kind", "namespace"]) {
      if (params.get(key)) query.set(key, params.get(key));
    }
    const data = await api("/api/portal/runs?" + query);
    setScope(data.scope);
    const q = el("input", { id: "filter-q", placeholder: "search name, run id, queue, owner", value: params.get("q") || "" });
    const state = el("select", { id: "filter-state" },
      ["", "Running", "Pending", "Suspended", "Complete", "Failed", "Cancelled"].map((s) => {
        const option = el("option", { value: s }, s || "any state");
        if (s === (params.get("state") || "")) option.selected = true;
        return option;
      }));
    const apply = () => {
      const next = new URLSearchParams();
      if (q.value) next.set("q", q.value);
      if (state.value) next.set("state", state.value);
      history.pushState({}, "", "/portal/runs" + (next.toString() ? "?" + next : ""));
      route();
    };
    q.addEventListener("keydown", (event) => { if (event.key === "Enter") apply(); });
    state.addEventListener("change", apply);
    const rows = data.runs.map((r) => [
      r.historyOnly ? r.name : link("/portal/runs/" + encodeURIComponent(r.namespace) + "/" + encodeURIComponent(r.name), r.name),
      r.kind,
      pill(r.status),
      r.queue,
      String(r.gpus),
      r.age,
      r.owner,
      r.namespace,
      r.source,
    ]);
    main.replaceChildren(
      el("h1", {}, "Runs"),
      el("div", { class: "note", id: "history-state", "data-state": data.historyState },
        "history: " + data.historyState + (data.historyDiagnostic ? " (" + data.historyDiagnostic + ")" : "")),
      el("div", { class: "filters" }, q, state),
      el("div", { class: "note", id: "runs-total" }, data.total + " runs"),
      table("runs", ["Name", "Kind", "Status", "Queue", "GPUs", "Age", "Owner", "Namespace", "Source"], rows),
    );
  }

  // -- Run detail -------------------------------------------------------------------------

  async function runView(namespace, name) {
    const base = "/api/portal/runs/" + encodeURIComponent(namespace) + "/" + encodeURIComponent(name);
    const doc = await api(base);
    setScope(doc.scope);
    const phases = el("ol", { class: "phases", id: "phases" },
      doc.phases.map((p) => el("li", { "data-phase": p.name, "data-status": p.status },
        el("span", { class: "name" }, p.name), pill(p.status), el("span", {}, p.detail || ""),
        p.hint ? el("span", { class: "hint" }, "Hint: " + p.hint) : null)));
    const workloads = table("workloads", ["Workload", "Queue", "Phase", "ClusterQueue", "Reason"],
      doc.workloads.map((w) => [w.name, w.queue, pill(w.phase), w.clusterQueue, w.reason]));
    const pods = table("pods", ["Pod", "Phase", "Node", "Ready", "Restarts", "Reason"],
      doc.pods.map((p) => [p.name, pill(p.phase), p.node, p.ready ? "yes" : "no", String(p.restarts), p.reason]));
    const events = table("events", ["Time", "Type", "Reason", "Object", "Message"],
      doc.events.map((e) => [e.lastTimestamp, e.type, e.reason, e.object, e.message]));
    const diagnostics = doc.diagnostics.filter((d) => d.severity !== "info");
    const logs = el("div", { id: "logs" }, el("div", { class: "note" }, "loading log tail..."));
    main.replaceChildren(
      el("h1", { id: "run-title" }, (doc.status.workloadKind || "Run") + " " + namespace + "/" + name),
      el("div", {}, "State: ", pill(doc.status.displayState, doc.status.state), " ",
        el("a", { class: "button", id: "open-experiments", href: doc.experiment.url }, "Open in Experiments")),
      doc.failure
        ? el("div", { class: "error", id: "failure", "data-reason": doc.failure.reason, "data-owner": doc.failure.owner },
          "Failure: " + doc.failure.reason + " — " + doc.failure.category + ": " + doc.failure.summary +
          (doc.failure.owner ? " (owner: " + doc.failure.owner + ")" : ""))
        : null,
      diagnostics.length
        ? el("div", { id: "diagnostics" }, diagnostics.map((d) => el("div", { class: "note", "data-code": d.code }, "[" + d.code + "] " + d.message)))
        : null,
      el("h2", {}, "Progress"), phases,
      el("h2", {}, "Kueue"), workloads,
      el("h2", {}, "Pods"), pods,
      el("h2", {}, "Events"), events,
      el("h2", {}, "Log tail"), logs,
    );
    try {
      const tail = await api(base + "/logs?tail=100");
      logs.replaceChildren(...(tail.streams.length
        ? tail.streams.map((s) => el("div", {}, el("div", { class: "note" }, "pod/" + s.pod + "/" + s.container + (s.note ? " — " + s.note : "")), el("pre", {}, s.lines.join("\n"))))
        : [el("div", { class: "empty" }, "No pods to read logs from.")]));
    } catch (error) {
      logs.replaceChildren(el("div", { class: "error" }, error.message));
    }
  }

  // -- Jobs / Queue ---------------------------------------------------------------------------

  function bar(used, nominal) {
    const fill = el("span", {});
    const ratio = nominal > 0 ? Math.min(1, used / nominal) : 0;
    fill.style.width = Math.round(ratio * 100) + "%";
    return el("span", { class: "bar" }, fill);
  }

  function number(text) {
    const value = parseFloat(text);
    return Number.isFinite(value) ? value : 0;
  }

  async function jobsView() {
    const data = await api("/api/portal/jobs");
    setScope(data.scope);
    const sections = data.clusterQueues.map((cq) => el("section", { class: "cluster-queue", "data-name": cq.name },
      el("h2", {}, "ClusterQueue " + cq.name + (cq.active ? "" : " (inactive)")),
      el("div", { class: "note" }, cq.admittedWorkloads + " admitted · " + cq.pendingWorkloads + " pending"),
      el("div", { class: "quota" }, table("quota-" + cq.name, ["Flavor", "Resource", "Nominal", "Used", "Reserved", ""],
        cq.flavors.map((f) => [f.flavor, f.resource, f.nominal, f.used, f.reserved, bar(number(f.reserved), number(f.nominal))]))),
      el("h2", {}, "Pending"),
      table("pending-" + cq.name, ["Position", "Workload", "LocalQueue", "Priority", "Reason", "Position source"],
        cq.pending.map((w) => [String(w.positionInClusterQueue), w.name, w.namespace + "/" + w.localQueue, String(w.priority), w.reason, w.positionSource])),
      el("h2", {}, "Admitted"),
      table("admitted-" + cq.name, ["Workload", "LocalQueue", "Owner"],
        cq.admitted.map((w) => [w.name, w.namespace + "/" + w.localQueue, w.owner.kind + "/" + w.owner.name])),
    ));
    main.replaceChildren(
      el("h1", {}, "Jobs / Queue"),
      el("div", { class: "note", id: "visibility", "data-served": String(data.visibility.served) },
        "Kueue visibility API: " + (data.visibility.served ? "served (" + data.visibility.version + ")" : data.visibility.state)),
      ...sections,
      el("h2", {}, "LocalQueues"),
      table("local-queues", ["LocalQueue", "ClusterQueue", "Admitted", "Pending"],
        data.localQueues.map((q) => [q.namespace + "/" + q.name, q.clusterQueue, String(q.admittedWorkloads), String(q.pendingWorkloads)])),
    );
  }

  // -- Nodes ----------------------------------------------------------------------------------

  async function nodesView() {
    const data = await api("/api/portal/nodes");
    setScope(data.scope);
    const rows = data.nodes.map((n) => [
      n.name,
      pill(n.ready ? "Ready" : "NotReady", n.ready ? "ok" : "problem"),
      n.gpuClass,
      n.gpuAllocatable + "/" + n.gpuCapacity,
      el("span", {}, n.gpuHealth.map((h) => pill(h.type, h.state))),
      Object.entries(n.placementLabels).map(([k, v]) => k + "=" + v).join(" "),
    ]);
    main.replaceChildren(
      el("h1", {}, "Cluster Nodes"),
      el("div", { class: "cards" },
        el("div", { class: "card" }, el("b", { id: "gpu-nodes" }, String(data.gpuNodes)), "GPU nodes"),
        el("div", { class: "card" }, el("b", {}, String(data.gpus)), "GPUs"),
        el("div", { class: "card" }, el("b", {}, String(data.nodesWithGpuProblems)), "with GPU problems")),
      table("nodes", ["Node", "Ready", "GPU class", "GPUs (alloc/cap)", "GPU health", "TauCluster labels"], rows),
    );
  }

  // -- Experiments ----------------------------------------------------------------------------

  async function experimentsView() {
    const data = await api("/api/portal/experiments");
    setScope(data.scope);
    main.replaceChildren(
      el("h1", {}, "Experiments"),
      table("experiments", ["Experiment", "Project", "Runs", "Stellar"],
        data.experiments.map((x) => [x.experiment_id, x.project, String((x.runs || []).length), el("a", { href: x.stellarUrl }, "open")])),
    );
  }

  async function route() {
    document.body.dataset.ready = "false";
    const parts = location.pathname.replace(/\/+$/, "").split("/").slice(2).map(decodeURIComponent);
    const tab = parts[0] || "runs";
    for (const a of document.querySelectorAll("nav a")) a.classList.toggle("active", a.dataset.tab === tab);
    try {
      if (tab === "runs" && parts.length === 3) await runView(parts[1], parts[2]);
      else if (tab === "jobs") await jobsView();
      else if (tab === "nodes") await nodesView();
      else if (tab === "experiments") await experimentsView();
      else await runsView();
      done();
    } catch (error) {
      fail(error);
    }
  }

  for (const a of document.querySelectorAll("nav a, a.brand")) {
    a.addEventListener("click", (event) => {
      event.preventDefault();
      history.pushState({}, "", a.getAttribute("href"));
      route();
    });
  }
  window.addEventListener("popstate", route);
  route();
})();
