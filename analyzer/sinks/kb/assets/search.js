// Search the knowledge base by message text, offline: the data files are scripts (search/<project>.js)
// that call KB.data(project, rows), each row [id, exception, template, "its literal words", curated 1/0].
// A pasted error ranks the signatures whose template words it contains, rare words counting most.
(function (root) {
  "use strict";
  var WORD = /[a-z0-9_][a-z0-9_-]{2,}/g;  // the analyzer's literal words (sinks/kb/site.py SEARCH_WORD)

  function words(text) { return text.toLowerCase().match(WORD) || []; }

  // A pasted traceback without its frames: the header, `File "...", line N, in f` and the source line
  // under each would otherwise count as words of the message; but a bare `assert`, which has no
  // message, is known by that line.
  function message(text) {
    var kept = [], lines = text.split(/\r?\n/);
    for (var i = 0; i < lines.length; i++) {
      if (/^\s*Traceback \(most recent call last\):\s*$/.test(lines[i])) continue;
      if (/^\s*File "[^"]*", line \d+/.test(lines[i])) {
        if (i + 1 < lines.length && /^\s+\S/.test(lines[i + 1]) && !/^\s*File "/.test(lines[i + 1])) {
          i++;
          if (/^\s*assert\b/.test(lines[i])) kept.push(lines[i]);
        }
        continue;
      }
      kept.push(lines[i]);
    }
    return kept.join("\n");
  }

  function Index() { this.rows = []; this.postings = Object.create(null); this.loaded = Object.create(null); }

  Index.prototype.add = function (project, rows) {
    if (this.loaded[project]) return;
    this.loaded[project] = true;
    for (var i = 0; i < rows.length; i++) {
      var at = this.rows.length, own = rows[i][3] ? rows[i][3].split(" ") : [];
      this.rows.push({ id: rows[i][0], exception: rows[i][1], template: rows[i][2], words: own, curated: !!rows[i][4],
                       project: project });
      for (var j = 0; j < own.length; j++) (this.postings[own[j]] = this.postings[own[j]] || []).push(at);
    }
  };

  // The best `limit` rows for `query`, within `projects` (all loaded ones when empty).
  // Score: the weight of the template's words the query holds, times the share of its weight that is,
  // raised to a power: a message from a template shows every literal word of it, so one missing word
  // costs more than a further word found; among complete matches the most specific template wins.
  Index.prototype.search = function (query, projects, limit) {
    var asked = Object.create(null), total = this.rows.length || 1, self = this;
    query = message(query);
    words(query).forEach(function (w) { asked[w] = true; });
    var only = projects && projects.length ? projects : null;
    var weight = function (w) { var n = (self.postings[w] || []).length; return Math.log(1 + total / (1 + n)); };
    var covered = Object.create(null);
    Object.keys(asked).forEach(function (w) {
      var list = self.postings[w]; if (!list) return;
      var add = weight(w);
      for (var i = 0; i < list.length; i++) covered[list[i]] = (covered[list[i]] || 0) + add;
    });
    var typed = query.match(/([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt))\s*:/);
    var hits = [];
    Object.keys(covered).forEach(function (key) {
      var row = self.rows[key];
      if (only && only.indexOf(row.project) < 0) return;
      var all = 0;
      for (var i = 0; i < row.words.length; i++) all += weight(row.words[i]);
      var share = covered[key] / all, score = share * share * share * share * covered[key];
      if (typed && typed[1].split(".").pop() === row.exception.split(".").pop()) score *= 1.2;
      hits.push({ row: row, score: score });
    });
    hits.sort(function (a, b) {
      return b.score - a.score || (b.row.curated - a.row.curated) || (a.row.id < b.row.id ? -1 : 1);
    });
    return hits.slice(0, limit || 20);
  };

  // Which projects a query names (a pasted traceback names its files: sglang/srt/..., vllm/...).
  function named(query, projects) {
    var low = query.toLowerCase();
    return projects.filter(function (p) { return new RegExp("(^|[^a-z0-9])" + p.replace(/[^a-z0-9]/g, "\\$&") + "[/.\\s]").test(low); });
  }

  // A signature's page in the site: sinks/kb/paths.py page_path, which the tests hold this to.
  function pagePath(id) {
    var safe = function (s) { return s.replace(/[^A-Za-z0-9._-]+/g, "_").replace(/^_+|_+$/g, "") || "_"; };
    return "pages/" + safe(id.split(".")[0]) + "/" + safe(id) + ".html";
  }

  var KB = { Index: Index, words: words, message: message, named: named, index: new Index(), manifest: [], pagePath: pagePath };
  KB.data = function (project, rows) { KB.index.add(project, rows); if (KB.onload) KB.onload(project); };
  KB.projects = function (manifest) { KB.manifest = manifest; };
  root.KB = KB;
  if (typeof module !== "undefined" && module.exports) module.exports = KB;
  if (typeof document === "undefined") return;

  // The page: load the data a query needs, then rank.
  var pending = Object.create(null);
  function load(project, done) {
    var entry = KB.manifest.filter(function (m) { return m.name === project; })[0];
    if (!entry || KB.index.loaded[project]) return done();
    (pending[project] = pending[project] || []).push(done);
    if (pending[project].length > 1) return;
    var script = document.createElement("script");
    script.src = entry.file;
    script.onload = function () { var waiting = pending[project]; delete pending[project]; waiting.forEach(function (f) { f(); }); };
    document.head.appendChild(script);
  }
  function escapeHtml(s) { return s.replace(/[&<>"]/g, function (c) { return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" }[c]; }); }
  // The query's words marked in the template's literal text; its fields ({...}) dimmed, unmarked.
  function highlight(text, asked) {
    return text.split(/(\{[^{}]*\})/).map(function (part, i) {
      if (i % 2) return '<span class="field">' + escapeHtml(part) + "</span>";
      return escapeHtml(part).replace(/[A-Za-z0-9_][A-Za-z0-9_-]{2,}/g, function (w) { return asked[w.toLowerCase()] ? "<mark>" + w + "</mark>" : w; });
    }).join("");
  }

  document.addEventListener("DOMContentLoaded", function () {
    var box = document.getElementById("q"), select = document.getElementById("project");
    var status = document.getElementById("status"), list = document.getElementById("results");
    if (!box) return;
    KB.manifest.forEach(function (m) {
      var option = document.createElement("option"); option.value = m.name; option.textContent = m.name + " (" + m.count + ")";
      select.appendChild(option);
    });
    var params = new URLSearchParams(location.search);
    if (params.get("q")) box.value = params.get("q");
    if (params.get("project")) select.value = params.get("project");
    var timer = null;
    function run() {
      var query = box.value;
      if (!words(query).length) { list.innerHTML = ""; status.textContent = ""; return; }
      var all = KB.manifest.map(function (m) { return m.name; });
      var projects = select.value ? [select.value] : named(query, all);
      if (!projects.length) projects = all;
      if (!projects.length) { status.textContent = "no search data"; return; }
      var left = projects.length;
      status.textContent = "loading " + projects.join(", ") + "…";
      projects.forEach(function (p) { load(p, function () { if (--left === 0) show(query, projects); }); });
    }
    function show(query, projects) {
      if (query !== box.value) return;
      var asked = Object.create(null); words(message(query)).forEach(function (w) { asked[w] = true; });
      var hits = KB.index.search(query, projects, 20);
      status.textContent = hits.length + " best of " + projects.join(", ");
      list.innerHTML = hits.map(function (h) {
        return '<li><a class="hit" href="' + pagePath(h.row.id) + '">' + escapeHtml(h.row.exception) + ": " +
          highlight(h.row.template, asked) + '</a><div class="where">' + escapeHtml(h.row.id) + " · score " + h.score.toFixed(1) + "</div></li>";
      }).join("");
    }
    box.addEventListener("input", function () { clearTimeout(timer); timer = setTimeout(run, 150); });
    select.addEventListener("change", run);
    run();
  });
})(typeof window !== "undefined" ? window : globalThis);
