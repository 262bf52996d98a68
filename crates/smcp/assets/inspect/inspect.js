// smcp inspect — browser front end.
//
// Plain ES2020, no framework. The page runs under a strict CSP, so:
// no inline handlers, no style attributes (CSSOM only), no eval, and every
// server-provided string goes into the DOM through textContent / attributes,
// never innerHTML.
'use strict';

(() => {
  // ===================================================================
  // Utilities
  // ===================================================================

  const $ = (sel, root = document) => root.querySelector(sel);

  // el('div', {className:'x', text:'hi', dataset:{a:1}, attrs:{title:'t'}, on:{click: fn}}, ...children)
  function el(tag, opts, ...children) {
    const node = document.createElement(tag);
    if (opts) {
      for (const [k, v] of Object.entries(opts)) {
        if (v === undefined || v === null) continue;
        if (k === 'text') node.textContent = String(v);
        else if (k === 'dataset') Object.assign(node.dataset, v);
        else if (k === 'attrs') for (const [a, av] of Object.entries(v)) { if (av !== null && av !== undefined && av !== false) node.setAttribute(a, av === true ? '' : String(av)); }
        else if (k === 'on') for (const [ev, fn] of Object.entries(v)) node.addEventListener(ev, fn);
        else node[k] = v;
      }
    }
    for (const c of children) {
      if (c === null || c === undefined || c === false) continue;
      node.append(c instanceof Node ? c : String(c));
    }
    return node;
  }

  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); return node; }

  function pretty(v) {
    try { return JSON.stringify(v, null, 2) ?? 'undefined'; } catch (e) { return String(v); }
  }

  function fmtBytes(n) {
    if (n === null || n === undefined) return '';
    if (n < 1024) return `${n} B`;
    if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} kB`;
    return `${(n / 1048576).toFixed(1)} MB`;
  }

  function fmtMs(n) {
    if (typeof n !== 'number') return '';
    return `${n < 10 ? n.toFixed(1) : Math.round(n)} ms`;
  }

  function fmtClock(d = new Date()) {
    return d.toTimeString().slice(0, 8) + '.' + String(d.getMilliseconds()).padStart(3, '0');
  }

  class ApiError extends Error {}

  // fetch wrapper: JSON in, JSON out, `{"error": "..."}` bodies become ApiError.
  async function api(method, path, body, rawBody) {
    const init = { method, headers: {} };
    if (rawBody !== undefined) {
      init.body = rawBody;
      init.headers['Content-Type'] = 'application/octet-stream';
    } else if (body !== undefined) {
      init.body = JSON.stringify(body);
      init.headers['Content-Type'] = 'application/json';
    }
    let res;
    try { res = await fetch(path, init); } catch (e) { throw new ApiError(`network error: ${e.message}`); }
    const text = await res.text();
    let data = null;
    if (text) { try { data = JSON.parse(text); } catch (e) { data = null; } }
    if (!res.ok) {
      const msg = data && typeof data.error === 'string' ? data.error : (text || res.statusText);
      throw new ApiError(`${res.status}: ${msg}`);
    }
    return data;
  }

  // Show an error message inside `box` (or in the global error bar).
  function showError(msg, box) {
    if (box) {
      box.hidden = false;
      box.textContent = String(msg);
      return;
    }
    const item = el('div', { className: 'error global-error' }, el('span', { text: String(msg) }),
      el('button', { type: 'button', className: 'dismiss', text: '×', on: { click: () => item.remove() } }));
    $('#errors').append(item);
  }

  function hideError(box) { box.hidden = true; box.textContent = ''; }

  function deepEqual(a, b) {
    if (a === b) return true;
    if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return false;
    if (Array.isArray(a) !== Array.isArray(b)) return false;
    const ka = Object.keys(a), kb = Object.keys(b);
    if (ka.length !== kb.length) return false;
    return ka.every((k) => deepEqual(a[k], b[k]));
  }

  // Run fn at most once per animation frame (with a timer fallback for hidden tabs).
  function frameBatcher(fn) {
    let scheduled = false;
    const run = () => { if (!scheduled) return; scheduled = false; fn(); };
    return () => {
      if (scheduled) return;
      scheduled = true;
      requestAnimationFrame(run);
      setTimeout(run, 120);
    };
  }

  // ===================================================================
  // Virtual list: fixed row height, only visible rows are in the DOM.
  // ===================================================================

  class VirtualList {
    constructor(container, rowHeight, renderRow, updateRow) {
      this.box = container;
      this.rowHeight = rowHeight;
      this.renderRow = renderRow; // (item) => HTMLElement
      this.updateRow = updateRow; // (node, item) => void: refresh a kept row (e.g. selection)
      this.items = [];
      this.spacer = el('div', { className: 'vspacer' });
      this.box.append(this.spacer);
      this.rendered = new Map(); // item -> row element
      this.follow = true; // was the view at the bottom when the user last scrolled?
      this.refresh = frameBatcher(() => this.render(true));
      const onScroll = frameBatcher(() => this.render(false));
      this.box.addEventListener('scroll', () => {
        if (this.box.clientHeight) this.follow = this.atBottom();
        onScroll();
      }, { passive: true });
      if (window.ResizeObserver) new ResizeObserver(() => this.refresh()).observe(this.box);
    }
    setItems(items) { this.items = items; this.render(true); }
    atBottom() { return this.box.scrollTop + this.box.clientHeight >= this.box.scrollHeight - this.rowHeight * 1.5; }
    scrollToEnd() { this.box.scrollTop = this.box.scrollHeight; }
    // Fill the visible window (plus a margin). Rows are keyed by item, so a row whose item
    // is still visible is kept (just moved); full=true also runs updateRow on kept rows.
    render(full) {
      const n = this.items.length;
      this.spacer.style.height = `${n * this.rowHeight}px`;
      const viewH = this.box.clientHeight || 800;
      const first = Math.max(0, Math.floor(this.box.scrollTop / this.rowHeight) - 5);
      const last = Math.min(n, Math.ceil((this.box.scrollTop + viewH) / this.rowHeight) + 5);
      const visible = new Set(this.items.slice(first, last));
      for (const [item, node] of this.rendered) {
        if (!visible.has(item)) { node.remove(); this.rendered.delete(item); }
      }
      const frag = document.createDocumentFragment();
      for (let i = first; i < last; i++) {
        const item = this.items[i];
        let node = this.rendered.get(item);
        if (node) {
          if (full && this.updateRow) this.updateRow(node, item);
        } else {
          node = this.renderRow(item);
          node.style.height = `${this.rowHeight}px`;
          this.rendered.set(item, node);
          frag.append(node);
        }
        const top = `${i * this.rowHeight}px`;
        if (node.style.top !== top) node.style.top = top;
      }
      this.box.append(frag);
    }
    count() { return this.rendered.size; }
  }

  // ===================================================================
  // State
  // ===================================================================

  const state = {
    server: null,
    tools: [],
    filteredTools: [],
    selectedTool: null,
    calls: new Map(),        // call id -> call record
    currentCall: null,       // id of the call shown in the tools panel
    callInFlight: false,     // POST /api/call not answered yet
    early: new Map(),        // events for call ids not known yet
    tasks: new Map(),        // taskId -> {task, call, updated}
    wire: [],
    wireView: [],            // wire entries passing the filter
    wireFilter: '',
    wirePending: [],
    selectedSeq: null,
    helloCount: 0,
  };

  // ===================================================================
  // Tabs
  // ===================================================================

  function showTab(name) {
    for (const b of document.querySelectorAll('button.tab')) {
      b.classList.toggle('active', b.dataset.tab === name);
      b.setAttribute('aria-selected', String(b.dataset.tab === name));
    }
    for (const p of document.querySelectorAll('section.panel')) p.hidden = p.id !== `panel-${name}`;
    if (name === 'tools') toolList.refresh();
    if (name === 'wire') {
      if (wireList.follow) wireList.scrollToEnd();
      wireList.refresh();
    }
  }

  // ===================================================================
  // Header + server panel
  // ===================================================================

  function setStatus(connected) {
    const s = $('#status');
    s.textContent = connected ? 'connected' : 'disconnected';
    s.dataset.state = connected ? 'connected' : 'disconnected';
  }

  function renderServer(srv) {
    state.server = srv;
    const info = (srv && srv.serverInfo) || {};
    $('#server-name').textContent = info.name ? `${info.title || info.name} ${info.version || ''}`.trim() : '(no serverInfo)';
    $('#server-transport').textContent = srv ? `${srv.transport}: ${srv.target}` : '';
    $('#server-era').textContent = srv && srv.era ? srv.era : '';
    document.title = info.name ? `${info.name} — smcp inspect` : 'smcp inspect';

    const box = clear($('#server-info'));
    if (!srv) return;
    const dl = el('dl', { className: 'kv' });
    const row = (k, v, mono) => dl.append(el('dt', { text: k }), el('dd', { className: mono ? 'mono' : '', text: v ?? '' }));
    row('Name', info.name); row('Title', info.title); row('Version', info.version);
    row('Protocol era', srv.era); row('Transport', srv.transport); row('Target', srv.target, true);
    row('smcp', srv.smcp, true);
    box.append(el('h3', { text: 'Server' }), dl);
    box.append(el('h3', { text: 'Capabilities' }), el('pre', { className: 'json', text: pretty(srv.capabilities) }));
    box.append(el('h3', { text: 'Instructions' }), el('pre', { className: 'text', text: srv.instructions || '(none)' }));
    if (Object.keys(info).some((k) => !['name', 'title', 'version'].includes(k))) {
      box.append(el('h3', { text: 'serverInfo' }), el('pre', { className: 'json', text: pretty(info) }));
    }
    $('#server-json').textContent = srv.discover == null ? 'null' : pretty(srv.discover);
  }

  async function loadServer() {
    try { renderServer(await api('GET', '/api/server')); } catch (e) { showError(`server info: ${e.message}`); }
  }

  // ===================================================================
  // Tools: list + search
  // ===================================================================

  function appUri(tool) {
    const meta = tool && tool._meta;
    if (!meta || typeof meta !== 'object') return null;
    const uri = (meta.ui && typeof meta.ui === 'object' && meta.ui.resourceUri) || meta['ui/resourceUri'];
    return typeof uri === 'string' && uri.startsWith('ui://') ? uri : null;
  }

  const toolList = new VirtualList($('#tool-list'), 40, (tool) => {
    const row = el('div', { className: 'tool-row vrow', dataset: { name: tool.name }, title: tool.name });
    if (state.selectedTool && state.selectedTool.name === tool.name) row.classList.add('selected');
    const head = el('div', { className: 'tool-row-name' }, el('span', { className: 'mono', text: tool.name }));
    if (appUri(tool)) head.append(el('span', { className: 'badge small', text: 'app' }));
    const sub = tool.title || (tool.description || '').split('\n')[0];
    row.append(head, el('div', { className: 'tool-row-desc', text: sub }));
    return row;
  }, (row, tool) => row.classList.toggle('selected', !!state.selectedTool && state.selectedTool.name === tool.name));

  function filterTools() {
    const words = $('#tool-search').value.toLowerCase().split(/\s+/).filter(Boolean);
    state.filteredTools = words.length
      ? state.tools.filter((t) => words.every((w) => t._hay.includes(w)))
      : state.tools;
    toolList.box.scrollTop = 0;
    toolList.setItems(state.filteredTools);
    $('#tools-count').textContent = words.length ? `${state.filteredTools.length}/${state.tools.length}` : String(state.tools.length);
  }

  async function loadTools() {
    try {
      const data = await api('GET', '/api/tools');
      state.tools = (data && Array.isArray(data.tools) ? data.tools : []).filter((t) => t && typeof t.name === 'string');
      for (const t of state.tools) t._hay = `${t.name}\n${t.title || ''}\n${t.description || ''}`.toLowerCase();
      filterTools();
      if (state.selectedTool) {
        const again = state.tools.find((t) => t.name === state.selectedTool.name);
        if (again) state.selectedTool = again;
      }
    } catch (e) { showError(`tools: ${e.message}`); }
  }

  $('#tool-list').addEventListener('click', (ev) => {
    const row = ev.target.closest('.tool-row');
    if (!row) return;
    const tool = state.tools.find((t) => t.name === row.dataset.name);
    if (tool) selectTool(tool);
  });

  // ===================================================================
  // Schema-driven form fields
  //
  // buildField returns {el, get(), check(errors), prepare()}:
  //   get()      current value, undefined when empty
  //   check(out) pushes "path: message" strings for invalid/missing input
  //   prepare()  async work before get() (file uploads)
  // ===================================================================

  let fieldSeq = 0;

  function resolveRef(schema, root, depth = 0) {
    if (schema && typeof schema === 'object' && typeof schema.$ref === 'string' && schema.$ref.startsWith('#/') && root && depth < 8) {
      let target = root;
      for (const part of schema.$ref.slice(2).split('/')) target = target && target[part.replace(/~1/g, '/').replace(/~0/g, '~')];
      if (target && typeof target === 'object') return resolveRef({ ...target, ...schema, $ref: undefined }, root, depth + 1);
    }
    return schema;
  }

  function schemaType(s) {
    let t = s.type;
    if (Array.isArray(t)) { const nn = t.filter((x) => x !== 'null'); t = nn.length === 1 ? nn[0] : null; }
    if (!t && s.properties) t = 'object';
    if (!t && s.items) t = 'array';
    return t || null;
  }

  const isFile = (s) => !!s && s['x-mcp-file'] !== undefined && s['x-mcp-file'] !== false;

  // enum or oneOf/anyOf of consts -> [{value, label}] or null
  function choices(s) {
    if (!s) return null;
    if (Array.isArray(s.enum)) return s.enum.map((v, i) => ({ value: v, label: (Array.isArray(s.enumNames) && s.enumNames[i]) || String(v) }));
    const alts = s.oneOf || s.anyOf;
    if (Array.isArray(alts) && alts.length && alts.every((a) => a && 'const' in a)) {
      return alts.map((a) => ({ value: a.const, label: a.title || String(a.const) }));
    }
    return null;
  }

  function isScalarSchema(s) {
    const t = schemaType(s);
    return !!choices(s) || ['string', 'number', 'integer', 'boolean'].includes(t);
  }

  function fieldLabel(s, name, required, forId) {
    const label = el('label', { className: 'field-label', htmlFor: forId },
      el('span', { className: 'mono', text: name }));
    if (s.title && s.title !== name) label.append(el('span', { className: 'field-title', text: s.title }));
    if (required) label.append(el('span', { className: 'req', title: 'required', text: '*' }));
    return label;
  }

  function fieldHelp(s) {
    return s.description ? el('div', { className: 'help', text: s.description }) : null;
  }

  // `anyOf: [X, {type: null}]` (common for optional Python params) -> X.
  function unwrapNullable(s, root) {
    const alts = s.anyOf || s.oneOf;
    if (s.type || !Array.isArray(alts)) return s;
    const nn = alts.filter((a) => !(a && a.type === 'null'));
    if (nn.length !== 1 || nn.length === alts.length) return s;
    const { anyOf, oneOf, ...rest } = s;
    return { ...(resolveRef(nn[0], root) || {}), ...rest };
  }

  // opts: {name (label), required, value, root (for $ref), onChange, elicit (elicitation form), depth}
  function buildField(schema, path, opts) {
    const s = unwrapNullable(resolveRef(schema || {}, opts.root) || {}, opts.root);
    const t = schemaType(s);
    const depth = opts.depth || 0;
    const value = opts.value !== undefined ? opts.value : s.default;
    const o = { ...opts, value };
    if (depth > 6) return jsonField(s, path, o);
    if (isFile(s) || (t === 'array' && isFile(resolveRef(s.items, opts.root)))) return fileField(s, path, o, t === 'array');
    if (choices(s)) return selectField(s, path, o);
    if (t === 'boolean') return boolField(s, path, o);
    if (t === 'integer' || t === 'number') return numberField(s, path, o, t);
    if (t === 'string') return textField(s, path, o);
    if (t === 'object' && s.properties && typeof s.properties === 'object' && !s.additionalProperties) return objectField(s, path, o);
    if (t === 'array' && s.items && !Array.isArray(s.items)) {
      const items = resolveRef(s.items, opts.root) || {};
      if (opts.elicit && choices(items)) return multiSelectField(s, items, path, o);
      if (isScalarSchema(items) || (schemaType(items) === 'object' && items.properties && !items.additionalProperties)) return arrayField(s, items, path, o);
    }
    return jsonField(s, path, o);
  }

  function wrapField(s, path, opts, control, id) {
    const wrap = el('div', { className: 'field', dataset: { path } });
    wrap.append(fieldLabel(s, opts.name, opts.required, id), control);
    const help = fieldHelp(s);
    if (help) wrap.append(help);
    return wrap;
  }

  function markInvalid(node, bad) { node.classList.toggle('invalid', bad); }

  // A field with one control: `problem()` answers an error message or null.
  function leaf(s, path, opts, control, get, problem) {
    return {
      el: wrapField(s, path, opts, control, control.id), get, prepare: async () => {},
      check(out) {
        const msg = problem();
        markInvalid(control, !!msg);
        if (msg) out.push(`${path}: ${msg}`);
      },
    };
  }

  function textField(s, path, opts) {
    const types = { date: 'date', email: 'email', uri: 'url', url: 'url', time: 'time' };
    const input = el('input', { id: `f${++fieldSeq}`, name: path, type: types[s.format] || 'text', required: !!opts.required, spellcheck: false });
    if (s.minLength !== undefined) input.minLength = s.minLength;
    if (s.maxLength !== undefined) input.maxLength = s.maxLength;
    if (s.pattern) input.title = `pattern: ${s.pattern}`;
    if (s.format && !types[s.format]) input.placeholder = s.format;
    if (opts.value !== undefined && opts.value !== null) input.value = typeof opts.value === 'string' ? opts.value : JSON.stringify(opts.value);
    const get = () => (input.value === '' ? undefined : input.value);
    return leaf(s, path, opts, input, get, () => {
      const v = get();
      if (v === undefined) return opts.required ? 'required' : null;
      if (!opts.elicit) return null; // tool arguments: the server validates
      if (s.minLength !== undefined && v.length < s.minLength) return `at least ${s.minLength} characters`;
      if (s.maxLength !== undefined && v.length > s.maxLength) return `at most ${s.maxLength} characters`;
      return input.checkValidity() ? null : `not a valid ${s.format || 'value'}`;
    });
  }

  function numberField(s, path, opts, t) {
    const input = el('input', { id: `f${++fieldSeq}`, name: path, type: 'number', required: !!opts.required, step: t === 'integer' ? '1' : 'any' });
    if (s.minimum !== undefined) input.min = s.minimum;
    if (s.maximum !== undefined) input.max = s.maximum;
    if (typeof opts.value === 'number') input.value = String(opts.value);
    const get = () => (input.value === '' ? undefined : Number(input.value));
    return leaf(s, path, opts, input, get, () => {
      const v = get();
      if (input.validity.badInput || Number.isNaN(v)) return 'not a number';
      if (v === undefined) return opts.required ? 'required' : null;
      if (t === 'integer' && !Number.isInteger(v)) return 'must be an integer';
      if (opts.elicit && s.minimum !== undefined && v < s.minimum) return `must be ≥ ${s.minimum}`;
      if (opts.elicit && s.maximum !== undefined && v > s.maximum) return `must be ≤ ${s.maximum}`;
      return null;
    });
  }

  function boolField(s, path, opts) {
    const id = `f${++fieldSeq}`;
    const input = el('input', { id, name: path, type: 'checkbox', checked: opts.value === true });
    let touched = opts.value !== undefined;
    input.addEventListener('change', () => { touched = true; });
    const wrap = el('div', { className: 'field field-bool', dataset: { path } },
      input, fieldLabel(s, opts.name, opts.required, id), fieldHelp(s));
    return {
      el: wrap, prepare: async () => {}, check() {},
      // Optional untouched unchecked boxes are left out of tool arguments.
      get: () => (input.checked || touched || opts.required || opts.elicit ? input.checked : undefined),
    };
  }

  function selectField(s, path, opts) {
    const list = choices(s);
    const select = el('select', { id: `f${++fieldSeq}`, name: path, required: !!opts.required });
    select.append(el('option', { value: '', text: opts.required ? '— choose —' : '(none)' }));
    list.forEach((c, i) => select.append(el('option', { value: String(i), text: c.label === String(c.value) ? c.label : `${c.label} (${c.value})` })));
    const idx = list.findIndex((c) => deepEqual(c.value, opts.value));
    select.value = idx >= 0 ? String(idx) : '';
    const get = () => (select.value === '' ? undefined : list[Number(select.value)].value);
    return leaf(s, path, opts, select, get, () => (opts.required && get() === undefined ? 'required' : null));
  }

  // Elicitation arrays of enum strings: one <select multiple>.
  function multiSelectField(s, items, path, opts) {
    const list = choices(items);
    const select = el('select', { id: `f${++fieldSeq}`, name: path, multiple: true, size: Math.min(6, list.length) });
    const initial = Array.isArray(opts.value) ? opts.value : [];
    list.forEach((c, i) => select.append(el('option', { value: String(i), text: c.label, selected: initial.some((v) => deepEqual(v, c.value)) })));
    const get = () => Array.from(select.selectedOptions, (o) => list[Number(o.value)].value);
    return leaf(s, path, opts, select, get, () => {
      const n = get().length;
      if (opts.required && n === 0) return 'required';
      if (s.minItems !== undefined && n < s.minItems) return `choose at least ${s.minItems}`;
      if (s.maxItems !== undefined && n > s.maxItems) return `choose at most ${s.maxItems}`;
      return null;
    });
  }

  // Fallback for schemas the form cannot express: a JSON textarea.
  function jsonField(s, path, opts) {
    const area = el('textarea', { id: `f${++fieldSeq}`, name: path, className: 'json-input', spellcheck: false, rows: 3, placeholder: 'JSON value' });
    if (opts.value !== undefined) area.value = pretty(opts.value);
    const parse = () => {
      const txt = area.value.trim();
      if (!txt) return { value: undefined };
      try { return { value: JSON.parse(txt) }; } catch (e) { return { error: e.message }; }
    };
    return leaf(s, path, opts, area, () => parse().value, () => {
      const p = parse();
      if (p.error) return `invalid JSON (${p.error})`;
      return opts.required && p.value === undefined ? 'required' : null;
    });
  }

  // x-mcp-file fields: <input type=file>, uploaded through /api/upload on submit.
  function fileField(s, path, opts, multiple) {
    const id = `f${++fieldSeq}`;
    const input = el('input', { id, name: path, type: 'file', multiple });
    const decl = (multiple && !isFile(s) ? resolveRef(s.items, opts.root) : s)['x-mcp-file'];
    if (decl && Array.isArray(decl.accept)) input.accept = decl.accept.join(',');
    const status = el('div', { className: 'help mono' });
    let values = opts.value === undefined ? [] : [].concat(opts.value).filter((v) => typeof v === 'string');
    let uploadedFor = null; // the FileList the values came from
    if (values.length) status.textContent = `current: ${values.map((v) => v.slice(0, 60)).join(', ')}`;
    const wrap = wrapField(s, path, opts, input, id);
    wrap.append(status);
    return {
      el: wrap,
      get: () => (multiple ? (values.length ? values.slice() : undefined) : values[0]),
      check(out) {
        const bad = opts.required && !values.length && !input.files.length;
        markInvalid(input, bad);
        if (bad) out.push(`${path}: required`);
      },
      async prepare() {
        if (!input.files.length || uploadedFor === input.files) return;
        const files = Array.from(input.files);
        status.textContent = `uploading ${files.length} file(s)…`;
        const tool = state.selectedTool ? state.selectedTool.name : '';
        const out = [];
        for (const f of files) {
          const q = `tool=${encodeURIComponent(tool)}&field=${encodeURIComponent(path)}&name=${encodeURIComponent(f.name)}`;
          const res = await api('POST', `/api/upload?${q}`, undefined, f);
          out.push(res.value);
        }
        values = out;
        uploadedFor = input.files;
        status.textContent = `uploaded: ${out.map((v) => String(v).slice(0, 60)).join(', ')}`;
      },
    };
  }

  function objectField(s, path, opts) {
    const required = new Set(Array.isArray(s.required) ? s.required : []);
    const value = opts.value && typeof opts.value === 'object' && !Array.isArray(opts.value) ? opts.value : {};
    const children = Object.entries(s.properties).map(([key, sub]) => ({
      key,
      field: buildField(sub, path ? `${path}.${key}` : key, {
        ...opts, isRoot: false, name: key, required: required.has(key), value: value[key], depth: (opts.depth || 0) + 1,
      }),
    }));
    let node;
    if (opts.isRoot) {
      node = el('div', { className: 'form-root' });
      if (!children.length) node.append(el('div', { className: 'muted', text: 'No arguments.' }));
    } else {
      node = el('fieldset', { className: 'object', dataset: { path } }, el('legend', {}, fieldLabel(s, opts.name, opts.required)));
      const help = fieldHelp(s);
      if (help) node.append(help);
    }
    for (const c of children) node.append(c.field.el);
    const get = () => {
      const obj = {};
      for (const c of children) { const v = c.field.get(); if (v !== undefined) obj[c.key] = v; }
      return Object.keys(obj).length || opts.required || opts.isRoot ? obj : undefined;
    };
    return {
      el: node, get,
      check(out) {
        if (!opts.required && !opts.isRoot && get() === undefined) return; // optional and empty
        for (const c of children) c.field.check(out);
      },
      prepare: () => Promise.all(children.map((c) => c.field.prepare())),
    };
  }

  // Arrays of scalars / objects: repeatable rows named path.0, path.1, ...
  function arrayField(s, items, path, opts) {
    const set = el('fieldset', { className: 'array', dataset: { path } }, el('legend', {}, fieldLabel(s, opts.name, opts.required)));
    const help = fieldHelp(s);
    if (help) set.append(help);
    const rowsBox = el('div', { className: 'array-rows' });
    let fields = [];
    const current = () => fields.map((f) => f.get());
    const renderRows = (values) => {
      clear(rowsBox);
      fields = values.map((v, i) => {
        const f = buildField(items, `${path}.${i}`, { ...opts, isRoot: false, name: `${opts.name}[${i}]`, required: false, value: v, depth: (opts.depth || 0) + 1 });
        const remove = el('button', { type: 'button', className: 'array-remove', title: 'Remove', text: '−', dataset: { field: path, index: String(i) } });
        remove.addEventListener('click', () => { const vals = current(); vals.splice(i, 1); renderRows(vals); changed(); });
        rowsBox.append(el('div', { className: 'array-row' }, f.el, remove));
        return f;
      });
    };
    const changed = () => { if (opts.onChange) opts.onChange(); };
    const add = el('button', { type: 'button', className: 'array-add', text: '+ Add item', dataset: { field: path } });
    add.addEventListener('click', () => { const vals = current(); vals.push(undefined); renderRows(vals); changed(); });
    renderRows(Array.isArray(opts.value) ? opts.value : []);
    set.append(rowsBox, add);
    const get = () => {
      const vals = current().filter((v) => v !== undefined);
      return vals.length || opts.required ? vals : undefined;
    };
    return {
      el: set, get,
      check(out) {
        for (const f of fields) f.check(out);
        if (opts.required && !get().length && s.minItems) out.push(`${path}: at least ${s.minItems} item(s)`);
      },
      prepare: () => Promise.all(fields.map((f) => f.prepare())),
    };
  }

  // Build the root form for an object schema (tool input, elicitation, prompt).
  function buildRootForm(schema, value, extra = {}) {
    const s = schema && typeof schema === 'object' ? schema : { type: 'object', properties: {} };
    const obj = s.properties ? s : { ...s, properties: {} };
    return objectField(obj, '', { isRoot: true, root: s, value: value || {}, ...extra });
  }

  // ===================================================================
  // Tools: selected tool, form, JSON toggle, call
  // ===================================================================

  let toolForm = null; // root field of the current tool form

  function selectTool(tool) {
    state.selectedTool = tool;
    toolList.refresh();
    $('#tool-empty').hidden = true;
    $('#tool-detail').hidden = false;
    $('#tool-name').textContent = tool.name;
    $('#tool-title').textContent = tool.title || (tool.annotations && tool.annotations.title) || '';
    $('#tool-description').textContent = tool.description || '';
    renderAnnotations(tool);
    const schemas = clear($('#tool-schemas'));
    schemas.append(collapsible('Input schema', pretty(tool.inputSchema)));
    if (tool.outputSchema) schemas.append(collapsible('Output schema', pretty(tool.outputSchema)));
    if (tool._meta) schemas.append(collapsible('_meta', pretty(tool._meta)));
    $('#tool-json-toggle').checked = false;
    $('#tool-json').hidden = true;
    $('#tool-fields').hidden = false;
    hideError($('#form-error'));
    buildToolForm({});
    const running = state.currentCall && state.calls.get(state.currentCall);
    if (!running || running.state !== 'running') {
      $('#call-output').hidden = true;
      state.currentCall = null;
      resetCallOutput();
    }
  }

  function collapsible(title, text) {
    return el('details', { className: 'schema' }, el('summary', { text: title }), el('pre', { className: 'json', text }));
  }

  function renderAnnotations(tool) {
    const box = clear($('#tool-annotations'));
    const a = tool.annotations || {};
    const hints = { readOnlyHint: 'read-only', destructiveHint: 'destructive', idempotentHint: 'idempotent', openWorldHint: 'open-world' };
    for (const [k, label] of Object.entries(hints)) {
      if (typeof a[k] === 'boolean') box.append(el('span', { className: `badge ${a[k] ? 'on' : 'off'}`, title: k, text: a[k] ? label : `not ${label}` }));
    }
    for (const [k, v] of Object.entries(a)) {
      if (!(k in hints) && k !== 'title') box.append(el('span', { className: 'badge', text: `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}` }));
    }
    if (tool.execution && tool.execution.taskSupport) box.append(el('span', { className: 'badge', text: `tasks: ${tool.execution.taskSupport}` }));
    if (tool.outputSchema) box.append(el('span', { className: 'badge', text: 'outputSchema' }));
    const ui = appUri(tool);
    if (ui) box.append(el('span', { className: 'badge app', text: `app: ${ui}` }));
  }

  function buildToolForm(value) {
    const tool = state.selectedTool;
    toolForm = buildRootForm(tool.inputSchema, value, { onChange: syncFormToJson });
    clear($('#tool-fields')).append(toolForm.el);
    syncFormToJson();
  }

  function syncFormToJson() {
    if (!toolForm || $('#tool-json-toggle').checked) return;
    $('#tool-json').value = pretty(toolForm.get() || {});
  }

  function parseJsonArgs() {
    const txt = $('#tool-json').value.trim();
    if (!txt) return { value: {} };
    try {
      const v = JSON.parse(txt);
      if (!v || typeof v !== 'object' || Array.isArray(v)) return { error: 'arguments must be a JSON object' };
      return { value: v };
    } catch (e) { return { error: `invalid JSON: ${e.message}` }; }
  }

  function onJsonToggle() {
    const on = $('#tool-json-toggle').checked;
    const err = $('#form-error');
    hideError(err);
    if (on) {
      $('#tool-json').value = pretty(toolForm ? toolForm.get() || {} : {});
    } else {
      const p = parseJsonArgs();
      if (p.error) { $('#tool-json-toggle').checked = true; showError(p.error, err); return; }
      buildToolForm(p.value);
    }
    $('#tool-json').hidden = !on;
    $('#tool-fields').hidden = on;
  }

  // Collect and validate arguments; returns null (and shows why) when invalid.
  async function collectArgs() {
    const err = $('#form-error');
    hideError(err);
    const tool = state.selectedTool;
    if ($('#tool-json-toggle').checked) {
      const p = parseJsonArgs();
      if (p.error) { showError(p.error, err); return null; }
      const req = (tool.inputSchema && Array.isArray(tool.inputSchema.required)) ? tool.inputSchema.required : [];
      const missing = req.filter((k) => p.value[k] === undefined);
      if (missing.length) { showError(`missing required: ${missing.join(', ')}`, err); return null; }
      return p.value;
    }
    const problems = [];
    toolForm.check(problems);
    if (problems.length) { showError(problems.join('; '), err); return null; }
    try { await toolForm.prepare(); } catch (e) { showError(`upload failed: ${e.message}`, err); return null; }
    syncFormToJson();
    return toolForm.get() || {};
  }

  async function startCall(ev) {
    ev.preventDefault();
    const tool = state.selectedTool;
    if (!tool || state.callInFlight) return;
    // Drop the previous result at once, so nothing stale is read as this call's outcome.
    const prev = state.currentCall && state.calls.get(state.currentCall);
    if (!prev || prev.state !== 'running') resetCallOutput();
    const args = await collectArgs();
    if (!args) return;
    const callBtn = $('#call-button');
    callBtn.disabled = true;
    state.callInFlight = true;
    let res;
    try {
      res = await api('POST', '/api/call', { name: tool.name, arguments: args, logLevel: $('#log-level').value || null });
    } catch (e) {
      state.callInFlight = false;
      callBtn.disabled = false;
      showError(e.message, $('#form-error'));
      flushEarlyQuestions();
      return;
    }
    state.callInFlight = false;
    const call = { id: res.call, tool, args, state: 'running', started: Date.now() };
    state.calls.set(call.id, call);
    showCall(call);
    // Replay events that raced ahead of the POST answer.
    const early = state.early.get(call.id) || [];
    state.early.delete(call.id);
    for (const msg of early) handleCallEvent(msg);
    flushEarlyQuestions();
  }

  // Empty the call area (previous progress, log, questions, result, app).
  function resetCallOutput() {
    closeApp();
    for (const id of ['#call-task', '#call-questions', '#call-rounds', '#call-log', '#call-progress-message', '#call-id']) clear($(id));
    $('#call-progress').hidden = true;
    const result = clear($('#call-result'));
    result.hidden = true;
    delete result.dataset.state;
  }

  function showCall(call) {
    state.currentCall = call.id;
    resetCallOutput();
    $('#call-output').hidden = false;
    $('#call-id').textContent = `call ${call.id}`;
    const prog = $('#call-progress');
    prog.hidden = false;
    prog.removeAttribute('value');
    prog.removeAttribute('max');
    $('#call-progress-message').textContent = 'running…';
    $('#cancel-button').disabled = false;
    $('#call-button').disabled = true;
  }

  async function cancelCall() {
    const id = state.currentCall;
    if (!id) return;
    $('#cancel-button').disabled = true;
    try { await api('POST', '/api/cancel', { call: id }); } catch (e) { showError(`cancel: ${e.message}`); $('#cancel-button').disabled = false; }
  }

  // Events that belong to a call id (progress, log, question, task, result, error).
  function handleCallEvent(msg) {
    const call = state.calls.get(msg.call);
    if (!call) return false;
    const shown = state.currentCall === call.id;
    switch (msg.type) {
      case 'progress':
        if (shown) onProgress(msg);
        break;
      case 'log':
        if (shown) appendLog(msg);
        break;
      case 'question':
        if (shown) $('#call-questions').append(renderQuestion(msg));
        else $('#questions').append(renderQuestion(msg));
        break;
      case 'task':
        if (shown) $('#call-task').textContent = `task ${msg.task.taskId}: ${msg.task.status}${msg.task.statusMessage ? ` — ${msg.task.statusMessage}` : ''}`;
        break;
      case 'result':
      case 'error':
        call.state = msg.type === 'result' ? 'ok' : (msg.error && msg.error.cancelled ? 'cancelled' : 'error');
        call.end = msg;
        if (shown) onCallEnd(call, msg);
        break;
      default: return false;
    }
    return true;
  }

  function onProgress(msg) {
    const prog = $('#call-progress');
    if (typeof msg.total === 'number' && msg.total > 0) {
      prog.max = msg.total;
      prog.value = Math.min(msg.progress, msg.total);
    } else {
      prog.removeAttribute('value');
      prog.removeAttribute('max');
    }
    const counter = typeof msg.total === 'number' ? `${msg.progress}/${msg.total}` : String(msg.progress);
    $('#call-progress-message').textContent = msg.message ? `${msg.message} (${counter})` : counter;
  }

  function appendLog(msg) {
    const data = typeof msg.data === 'string' ? msg.data : JSON.stringify(msg.data);
    const line = el('div', { className: `log-line level-${msg.level}`, dataset: { level: msg.level || '' } },
      el('span', { className: 'log-time', text: fmtClock() }),
      el('span', { className: 'log-level', text: msg.level || '' }),
      msg.logger ? el('span', { className: 'log-logger', text: msg.logger }) : null,
      el('span', { className: 'log-data', text: data }));
    const box = $('#call-log');
    box.append(line);
    box.scrollTop = box.scrollHeight;
  }

  function onCallEnd(call, msg) {
    $('#call-progress').hidden = true;
    $('#call-progress-message').textContent = '';
    $('#cancel-button').disabled = true;
    $('#call-button').disabled = false;
    renderCallResult(call, msg);
    $('#call-result').scrollIntoView({ block: 'nearest' });
    if (msg.type === 'result') {
      const uri = appUri(call.tool);
      if (uri) openApp(call, uri, msg.result);
    }
  }

  function renderCallResult(call, msg) {
    const box = clear($('#call-result'));
    box.hidden = false;
    box.dataset.state = call.state;
    const head = el('div', { className: 'result-head' },
      el('span', { className: `badge state-${call.state}`, text: call.state }),
      el('span', { className: 'muted elapsed', text: fmtMs(msg.elapsedMs) }));
    box.append(head);
    if (msg.type === 'error') {
      const e = msg.error || {};
      box.append(el('pre', { className: 'result-error', text: `${e.message || 'error'}${e.code != null ? ` (code ${e.code})` : ''}` }));
      box.append(collapsibleJson('result-json', 'Error JSON', e));
      return;
    }
    const result = msg.result || {};
    if (result.isError) head.append(el('span', { className: 'badge state-error', id: 'result-is-error', text: 'isError' }));
    const content = el('div', { className: 'result-content' });
    for (const block of Array.isArray(result.content) ? result.content : []) content.append(renderContentBlock(block));
    box.append(content);
    if (result.structuredContent !== undefined) {
      box.append(el('h4', { text: 'structuredContent' }), el('pre', { id: 'result-structured', className: 'json', text: pretty(result.structuredContent) }));
      if (call.tool.outputSchema) box.append(renderSchemaCheck(call.tool.outputSchema, result.structuredContent));
    }
    box.append(collapsibleJson('result-json', 'Result JSON', result));
  }

  function collapsibleJson(id, title, value) {
    return el('details', { className: 'raw' }, el('summary', { text: title }), el('pre', { id, className: 'json', text: pretty(value) }));
  }

  function renderSchemaCheck(schema, value) {
    const errors = validateSchema(schema, value);
    const ok = errors.length === 0;
    const node = el('div', { id: 'schema-check', className: ok ? 'ok' : 'bad', dataset: { valid: String(ok) } },
      el('div', { text: ok ? '✓ structuredContent matches outputSchema' : `✗ structuredContent does not match outputSchema (${errors.length} problem${errors.length > 1 ? 's' : ''})` }));
    if (!ok) node.append(el('ul', {}, ...errors.slice(0, 50).map((e) => el('li', { className: 'mono', text: e }))));
    return node;
  }

  // Render one MCP content block (tool results, prompt messages, sampling).
  function renderContentBlock(b) {
    if (!b || typeof b !== 'object') return el('pre', { className: 'json', text: pretty(b) });
    switch (b.type) {
      case 'text': return el('pre', { className: 'result-text', text: b.text ?? '' });
      case 'image':
        return el('div', { className: 'result-media' }, el('img', { className: 'result-image', alt: b.mimeType || 'image', src: `data:${b.mimeType || 'image/png'};base64,${b.data || ''}` }));
      case 'audio':
        return el('div', { className: 'result-media' }, el('audio', { controls: true, src: `data:${b.mimeType || 'audio/wav'};base64,${b.data || ''}` }));
      case 'resource_link':
      case 'file':
        return el('div', { className: 'result-resource' },
          el('div', {}, el('span', { className: 'badge', text: b.type === 'file' ? 'file' : 'resource link' }),
            el('span', { className: 'mono', text: b.uri || '' }),
            el('span', { className: 'muted', text: [b.name, b.title, b.mimeType, b.size != null ? fmtBytes(b.size) : null].filter(Boolean).join(' · ') })),
          b.description ? el('div', { className: 'help', text: b.description }) : null);
      case 'resource': return renderResourceContents(b.resource || {}, 'embedded resource');
      default: return el('pre', { className: 'json', text: pretty(b) });
    }
  }

  // A ResourceContents item {uri, mimeType?, text?|blob?}.
  function renderResourceContents(r, label) {
    const box = el('div', { className: 'result-resource' });
    box.append(el('div', {}, label ? el('span', { className: 'badge', text: label }) : null,
      el('span', { className: 'mono', text: r.uri || '' }), el('span', { className: 'muted', text: r.mimeType || '' })));
    if (typeof r.text === 'string') {
      let txt = r.text;
      if (/json/.test(r.mimeType || '')) { try { txt = pretty(JSON.parse(txt)); } catch (e) { /* leave as is */ } }
      box.append(el('pre', { className: 'result-text', text: txt }));
    } else if (typeof r.blob === 'string') {
      const size = Math.floor(r.blob.length * 3 / 4) - (r.blob.endsWith('==') ? 2 : r.blob.endsWith('=') ? 1 : 0);
      const mime = r.mimeType || 'application/octet-stream';
      if (mime.startsWith('image/')) box.append(el('img', { className: 'result-image', alt: r.uri || 'image', src: `data:${mime};base64,${r.blob}` }));
      else if (mime.startsWith('audio/')) box.append(el('audio', { controls: true, src: `data:${mime};base64,${r.blob}` }));
      box.append(el('div', { className: 'muted blob-size', text: `binary, ${fmtBytes(size)}` }));
    }
    return box;
  }

  // ===================================================================
  // JSON Schema validator (the subset tools use for outputSchema)
  // ===================================================================

  function typeOf(v) {
    if (v === null) return 'null';
    if (Array.isArray(v)) return 'array';
    return typeof v; // 'number' | 'string' | 'boolean' | 'object'
  }

  function typeMatches(t, v) {
    if (t === 'integer') return typeof v === 'number' && Number.isInteger(v);
    if (t === 'number') return typeof v === 'number' && Number.isFinite(v);
    return typeOf(v) === t;
  }

  function validateSchema(schema, value, path = '$', root = schema, out = []) {
    if (schema === true || schema === undefined || schema === null) return out;
    if (schema === false) { out.push(`${path}: not allowed`); return out; }
    const s = resolveRef(schema, root);
    if (s.type !== undefined) {
      const types = Array.isArray(s.type) ? s.type : [s.type];
      if (!types.some((t) => typeMatches(t, value))) { out.push(`${path}: expected ${types.join('|')}, got ${typeOf(value)}`); return out; }
    }
    if (s.enum && !s.enum.some((e) => deepEqual(e, value))) out.push(`${path}: not one of ${JSON.stringify(s.enum)}`);
    if ('const' in s && !deepEqual(s.const, value)) out.push(`${path}: must equal ${JSON.stringify(s.const)}`);
    if (typeof value === 'number') {
      if (s.minimum !== undefined && value < s.minimum) out.push(`${path}: ${value} < minimum ${s.minimum}`);
      if (s.maximum !== undefined && value > s.maximum) out.push(`${path}: ${value} > maximum ${s.maximum}`);
      if (typeof s.exclusiveMinimum === 'number' && value <= s.exclusiveMinimum) out.push(`${path}: ${value} ≤ exclusiveMinimum ${s.exclusiveMinimum}`);
      if (typeof s.exclusiveMaximum === 'number' && value >= s.exclusiveMaximum) out.push(`${path}: ${value} ≥ exclusiveMaximum ${s.exclusiveMaximum}`);
    }
    if (typeof value === 'string') {
      const len = Array.from(value).length;
      if (s.minLength !== undefined && len < s.minLength) out.push(`${path}: shorter than minLength ${s.minLength}`);
      if (s.maxLength !== undefined && len > s.maxLength) out.push(`${path}: longer than maxLength ${s.maxLength}`);
      if (s.pattern) { try { if (!new RegExp(s.pattern, 'u').test(value)) out.push(`${path}: does not match pattern ${s.pattern}`); } catch (e) { /* bad pattern: skip */ } }
    }
    if (Array.isArray(value)) {
      if (s.minItems !== undefined && value.length < s.minItems) out.push(`${path}: fewer than minItems ${s.minItems}`);
      if (s.maxItems !== undefined && value.length > s.maxItems) out.push(`${path}: more than maxItems ${s.maxItems}`);
      if (Array.isArray(s.prefixItems)) s.prefixItems.forEach((sub, i) => { if (i < value.length) validateSchema(sub, value[i], `${path}[${i}]`, root, out); });
      if (s.items !== undefined) {
        if (Array.isArray(s.items)) s.items.forEach((sub, i) => { if (i < value.length) validateSchema(sub, value[i], `${path}[${i}]`, root, out); });
        else value.forEach((v, i) => { if (!Array.isArray(s.prefixItems) || i >= s.prefixItems.length) validateSchema(s.items, v, `${path}[${i}]`, root, out); });
      }
    }
    if (typeOf(value) === 'object') {
      const props = s.properties || {};
      for (const k of Array.isArray(s.required) ? s.required : []) if (!(k in value)) out.push(`${path}.${k}: required property missing`);
      for (const [k, v] of Object.entries(value)) {
        if (k in props) validateSchema(props[k], v, `${path}.${k}`, root, out);
        else if (s.additionalProperties === false) out.push(`${path}.${k}: additional property not allowed`);
        else if (s.additionalProperties && typeof s.additionalProperties === 'object') validateSchema(s.additionalProperties, v, `${path}.${k}`, root, out);
      }
    }
    if (Array.isArray(s.allOf)) for (const sub of s.allOf) validateSchema(sub, value, path, root, out);
    if (Array.isArray(s.anyOf) && !s.anyOf.some((sub) => validateSchema(sub, value, path, root, []).length === 0)) {
      out.push(`${path}: matches none of anyOf`);
    }
    if (Array.isArray(s.oneOf)) {
      const n = s.oneOf.filter((sub) => validateSchema(sub, value, path, root, []).length === 0).length;
      if (n !== 1) out.push(`${path}: matches ${n} of oneOf (expected exactly 1)`);
    }
    if (s.not !== undefined && validateSchema(s.not, value, path, root, []).length === 0) out.push(`${path}: must not match "not" schema`);
    return out;
  }

  // ===================================================================
  // Questions (elicitation / sampling), shared by call and global areas
  // ===================================================================

  function renderQuestion(q) {
    const p = q.params || {};
    const box = el('div', { className: 'question', dataset: { id: q.id, kind: q.kind } });
    const mode = q.kind === 'elicitation' ? (p.mode || 'form') : null;
    box.append(el('div', { className: 'question-head' },
      el('span', { className: 'badge', text: mode ? `${q.kind} (${mode})` : q.kind }),
      q.call ? el('span', { className: 'muted mono', text: `call ${q.call}` }) : el('span', { className: 'muted', text: 'not tied to a call' })));
    const errBox = el('div', { className: 'error', hidden: true });
    let answer; // () => answer object or null when invalid
    if (q.kind === 'sampling') answer = samplingBody(box, p);
    else if (mode === 'url') answer = urlBody(box, p);
    else answer = elicitFormBody(box, p);
    const buttons = el('div', { className: 'call-bar' });
    const send = async (action) => {
      hideError(errBox);
      let body = { action };
      if (action === 'accept') { body = answer(errBox); if (!body) return; }
      for (const b of buttons.querySelectorAll('button')) b.disabled = true;
      // The round is listed at once (the result may arrive before the answer's reply).
      const round = q.call && q.call === state.currentCall
        ? el('li', { dataset: { kind: q.kind, action }, text: `${q.kind}${mode && mode !== 'form' ? ` (${mode})` : ''}: ${action}` })
        : null;
      if (round) $('#call-rounds').append(round);
      try {
        await api('POST', '/api/answer', { question: q.id, answer: body });
        box.remove();
      } catch (e) {
        if (round) round.remove();
        showError(e.message, errBox);
        for (const b of buttons.querySelectorAll('button')) b.disabled = false;
      }
    };
    buttons.append(el('button', { type: 'button', className: 'accept primary', text: mode === 'url' ? 'Accept (I opened it)' : 'Accept', on: { click: () => send('accept') } }));
    buttons.append(el('button', { type: 'button', className: 'decline', text: 'Decline', on: { click: () => send('decline') } }));
    if (q.kind !== 'sampling') buttons.append(el('button', { type: 'button', className: 'cancel', text: 'Cancel', on: { click: () => send('cancel') } }));
    box.append(errBox, buttons);
    return box;
  }

  function elicitFormBody(box, p) {
    if (p.message) box.append(el('div', { className: 'question-message', text: p.message }));
    const form = buildRootForm(p.requestedSchema, {}, { elicit: true });
    box.append(form.el);
    return (errBox) => {
      const problems = [];
      form.check(problems);
      if (problems.length) { showError(problems.join('; '), errBox); return null; }
      return { action: 'accept', content: form.get() || {} };
    };
  }

  function urlBody(box, p) {
    if (p.message) box.append(el('div', { className: 'question-message', text: p.message }));
    box.append(el('div', { className: 'help', text: 'The server asks you to open this URL yourself (smcp does not open it):' }));
    box.append(el('div', { className: 'mono url-text', text: p.url || '' }));
    if (p.elicitationId) box.append(el('div', { className: 'muted mono', text: `elicitationId ${p.elicitationId}` }));
    return () => ({ action: 'accept' });
  }

  function samplingBody(box, p) {
    if (p.systemPrompt) box.append(el('div', { className: 'sampling-system' }, el('span', { className: 'badge', text: 'system' }), el('pre', { className: 'result-text', text: p.systemPrompt })));
    const msgs = el('div', { className: 'sampling-messages' });
    for (const m of Array.isArray(p.messages) ? p.messages : []) {
      const blocks = Array.isArray(m.content) ? m.content : [m.content];
      msgs.append(el('div', { className: `message role-${m.role}` }, el('span', { className: 'badge', text: m.role || '?' }), ...blocks.map(renderContentBlock)));
    }
    box.append(msgs);
    const meta = ['maxTokens', 'temperature', 'stopSequences', 'modelPreferences', 'includeContext'].filter((k) => p[k] !== undefined).map((k) => `${k}: ${JSON.stringify(p[k])}`);
    if (meta.length) box.append(el('div', { className: 'muted mono', text: meta.join('  ') }));
    const text = el('textarea', { name: 'text', className: 'sampling-answer', rows: 4, placeholder: 'Your reply as the assistant' });
    const model = el('input', { name: 'model', type: 'text', value: 'human' });
    box.append(el('label', { className: 'field-label', text: 'Reply' }), text, el('label', { className: 'field-label' }, 'Model ', model));
    return () => {
      return { action: 'accept', result: { role: 'assistant', content: { type: 'text', text: text.value }, model: model.value || 'human', stopReason: 'endTurn' } };
    };
  }

  function onQuestion(msg) {
    if (msg.call && state.calls.has(msg.call)) { handleCallEvent(msg); return; }
    if (msg.call && state.callInFlight) { bufferEarly(msg); return; } // probably our call; wait for its id
    $('#questions').append(renderQuestion(msg));
  }

  function bufferEarly(msg) {
    if (!state.early.has(msg.call)) {
      if (state.early.size > 50) state.early.delete(state.early.keys().next().value);
      state.early.set(msg.call, []);
    }
    const list = state.early.get(msg.call);
    if (list.length < 1000) list.push(msg);
  }

  // Questions buffered for calls that never became ours go to the global area.
  function flushEarlyQuestions() {
    if (state.callInFlight) return;
    for (const [id, list] of state.early) {
      const qs = list.filter((m) => m.type === 'question');
      for (const q of qs) $('#questions').append(renderQuestion(q));
      const rest = list.filter((m) => m.type !== 'question');
      if (rest.length) state.early.set(id, rest); else state.early.delete(id);
    }
  }

  function onQuestionClosed(msg) {
    for (const node of document.querySelectorAll('.question')) if (node.dataset.id === String(msg.id)) node.remove();
    for (const [id, list] of state.early) state.early.set(id, list.filter((m) => !(m.type === 'question' && m.id === msg.id)));
  }

  // ===================================================================
  // MCP Apps host (iframe + JSON-RPC bridge over postMessage)
  // ===================================================================

  let app = null; // {frame, view, call, result, initialized}

  function closeApp() {
    if (app && app.frame) app.frame.remove();
    app = null;
    const host = $('#app-host');
    host.hidden = true;
    clear($('#app-messages'));
    clear($('#app-bridge-log'));
  }

  async function openApp(call, uri, result) {
    closeApp();
    const host = $('#app-host');
    host.hidden = false;
    let view;
    try { view = await api('POST', '/api/app', { uri, call: call.id }); } catch (e) { appMessage(`could not open app ${uri}: ${e.message}`, 'error'); return; }
    if (state.currentCall !== call.id) return; // another call started meanwhile
    const frame = document.createElement('iframe');
    frame.id = 'app-frame';
    frame.setAttribute('sandbox', 'allow-scripts'); // never allow-same-origin
    if (view.allow) frame.setAttribute('allow', view.allow);
    frame.title = uri;
    if (view.prefersBorder !== false) frame.classList.add('bordered');
    app = { frame, view: view.view, call, result, initialized: false };
    frame.src = view.src;
    host.prepend(frame);
  }

  function bridgeLog(dir, msg) {
    let text = JSON.stringify(msg);
    if (text && text.length > 4000) text = `${text.slice(0, 4000)}…`;
    const box = $('#app-bridge-log');
    box.append(el('div', { className: `bridge-line ${dir}` }, el('span', { className: 'arrow', text: dir === 'out' ? 'host → app' : 'app → host' }), el('span', { className: 'mono', text })));
    box.scrollTop = box.scrollHeight;
  }

  function appMessage(text, kind = 'info') {
    $('#app-messages').append(el('div', { className: `app-message ${kind}`, text }));
  }

  function postToApp(msg) {
    if (!app || !app.frame.contentWindow) return;
    bridgeLog('out', msg);
    app.frame.contentWindow.postMessage(msg, '*');
  }

  const reply = (id, result) => postToApp({ jsonrpc: '2.0', id, result });
  const replyError = (id, code, message) => postToApp({ jsonrpc: '2.0', id, error: { code, message } });

  window.addEventListener('message', (ev) => {
    if (!app || ev.source !== app.frame.contentWindow) return; // only our frame
    const msg = ev.data;
    if (!msg || typeof msg !== 'object' || msg.jsonrpc !== '2.0') return;
    bridgeLog('in', msg);
    if (typeof msg.method !== 'string') return; // a response to something we never send
    const isRequest = msg.id !== undefined && msg.id !== null;
    handleAppMessage(app, msg, isRequest).catch((e) => { if (isRequest) replyError(msg.id, -32603, e.message); });
  });

  async function handleAppMessage(cur, msg, isRequest) {
    const p = msg.params || {};
    const stillCurrent = () => app === cur;
    switch (msg.method) {
      case 'ui/initialize': {
        if (!isRequest) return undefined;
        const dark = window.matchMedia && window.matchMedia('(prefers-color-scheme: dark)').matches;
        return reply(msg.id, {
          protocolVersion: '2026-01-26',
          hostInfo: { name: 'smcp inspect', version: '1' },
          hostCapabilities: { serverTools: {}, serverResources: {}, logging: {}, openLinks: {} },
          hostContext: { theme: dark ? 'dark' : 'light', displayMode: 'inline', availableDisplayModes: ['inline'], platform: 'web' },
        });
      }
      case 'ui/notifications/initialized':
        if (cur.initialized) return undefined;
        cur.initialized = true;
        postToApp({ jsonrpc: '2.0', method: 'ui/notifications/tool-input', params: { arguments: cur.call.args } });
        postToApp({ jsonrpc: '2.0', method: 'ui/notifications/tool-result', params: cur.result });
        return undefined;
      case 'tools/call': {
        if (!isRequest) return undefined;
        let res;
        try { res = await api('POST', '/api/app-call', { view: cur.view, name: p.name, arguments: p.arguments || {} }); } catch (e) {
          if (stillCurrent()) replyError(msg.id, -32603, e.message);
          return undefined;
        }
        if (stillCurrent()) reply(msg.id, res);
        return undefined;
      }
      case 'resources/read': {
        if (!isRequest) return undefined;
        let res;
        try { res = await api('POST', '/api/app-read', { view: cur.view, uri: p.uri }); } catch (e) {
          if (stillCurrent()) replyError(msg.id, -32603, e.message);
          return undefined;
        }
        if (stillCurrent()) reply(msg.id, res);
        return undefined;
      }
      case 'ui/open-link':
        appMessage(`The app asks to open a link (not opened): ${p.url}`, 'link');
        return isRequest ? reply(msg.id, {}) : undefined;
      case 'ui/message': {
        const blocks = Array.isArray(p.content) ? p.content : [p.content];
        const text = blocks.map((b) => (b && b.type === 'text' ? b.text : JSON.stringify(b))).join('\n');
        appMessage(`Message from app${p.role ? ` (${p.role})` : ''}: ${text}`, 'message');
        return isRequest ? reply(msg.id, {}) : undefined;
      }
      case 'notifications/message':
        appMessage(`[${p.level || 'info'}]${p.logger ? ` ${p.logger}:` : ''} ${typeof p.data === 'string' ? p.data : JSON.stringify(p.data)}`, 'log');
        return undefined;
      case 'ui/notifications/size-changed':
        if (typeof p.height === 'number' && Number.isFinite(p.height)) cur.frame.style.height = `${Math.max(50, Math.min(2000, Math.round(p.height)))}px`;
        return undefined;
      case 'ping':
        return isRequest ? reply(msg.id, {}) : undefined;
      default:
        return isRequest ? replyError(msg.id, -32601, 'Method not found') : undefined;
    }
  }

  // ===================================================================
  // Resources
  // ===================================================================

  const resources = { list: [], templates: [] };

  async function loadResources() {
    const [r, t] = await Promise.allSettled([api('GET', '/api/resources'), api('GET', '/api/templates')]);
    resources.list = r.status === 'fulfilled' && r.value && Array.isArray(r.value.resources) ? r.value.resources : [];
    resources.templates = t.status === 'fulfilled' && t.value && Array.isArray(t.value.resourceTemplates) ? t.value.resourceTemplates : [];
    if (r.status === 'rejected') showError(`resources: ${r.reason.message}`);
    if (t.status === 'rejected') showError(`templates: ${t.reason.message}`);
    renderResources();
  }

  function matches(obj, words, keys) {
    const hay = keys.map((k) => obj[k] || '').join('\n').toLowerCase();
    return words.every((w) => hay.includes(w));
  }

  function renderResources() {
    const words = $('#resource-search').value.toLowerCase().split(/\s+/).filter(Boolean);
    const list = clear($('#resource-list'));
    const rs = resources.list.filter((r) => matches(r, words, ['uri', 'name', 'title', 'description']));
    for (const r of rs.slice(0, 2000)) {
      list.append(el('div', { className: 'resource-row row', dataset: { uri: r.uri }, title: r.description || r.uri },
        el('div', { className: 'row-main', text: r.title || r.name || r.uri }),
        el('div', { className: 'row-sub mono', text: `${r.uri}${r.mimeType ? `  ${r.mimeType}` : ''}` })));
    }
    if (!rs.length) list.append(el('div', { className: 'empty', text: 'No resources.' }));
    const tl = clear($('#template-list'));
    const ts = resources.templates.filter((r) => matches(r, words, ['uriTemplate', 'name', 'title', 'description']));
    for (const t of ts.slice(0, 2000)) {
      tl.append(el('div', { className: 'template-row row', dataset: { uriTemplate: t.uriTemplate }, title: t.description || t.uriTemplate },
        el('div', { className: 'row-main', text: t.title || t.name || t.uriTemplate }),
        el('div', { className: 'row-sub mono', text: t.uriTemplate })));
    }
    if (!ts.length) tl.append(el('div', { className: 'empty', text: 'No templates.' }));
  }

  function selectRow(container, row) {
    for (const n of container.querySelectorAll('.selected')) n.classList.remove('selected');
    row.classList.add('selected');
  }

  async function readResource(uri) {
    const box = clear($('#resource-contents'));
    box.append(el('div', { className: 'muted', text: `reading ${uri}…` }));
    try {
      const res = await api('POST', '/api/read', { uri });
      clear(box);
      const contents = res && Array.isArray(res.contents) ? res.contents : [];
      if (!contents.length) box.append(el('div', { className: 'empty', text: 'No contents.' }));
      for (const c of contents) box.append(renderResourceContents(c));
      box.append(collapsibleJson('resource-json', 'Raw JSON', res));
    } catch (e) {
      clear(box).append(el('div', { className: 'error', text: e.message }));
    }
  }

  // Template click: one input per {variable}, then read the expanded URI.
  function showTemplateForm(t) {
    const box = clear($('#template-form'));
    const vars = [...new Set(Array.from(String(t.uriTemplate).matchAll(/\{[+#./;?&]?([^}]+)\}/g), (m) => m[1].split(',')).flat().map((v) => v.replace(/\*$|:\d+$/, '')))];
    const inputs = vars.map((v) => el('input', { name: v, type: 'text', placeholder: v }));
    const go = el('button', { type: 'button', className: 'primary', text: 'Read' });
    box.append(el('div', { className: 'template-head mono', text: t.uriTemplate }),
      ...vars.map((v, i) => el('label', { className: 'field-label' }, el('span', { className: 'mono', text: v }), inputs[i])), go);
    go.addEventListener('click', () => {
      const values = Object.fromEntries(vars.map((v, i) => [v, inputs[i].value]));
      const uri = String(t.uriTemplate).replace(/\{([+#./;?&]?)([^}]+)\}/g, (_, op, names) => {
        const parts = names.split(',').map((n) => n.replace(/\*$|:\d+$/, ''));
        const enc = op === '+' || op === '#' ? encodeURI : encodeURIComponent;
        const vals = parts.map((n) => enc(values[n] || ''));
        if (op === '?' || op === '&') return (op) + parts.map((n, i) => `${n}=${vals[i]}`).join('&');
        return (op === '+' ? '' : op) + vals.join(op === '/' ? '/' : op === '.' ? '.' : ',');
      });
      readResource(uri);
    });
  }

  // ===================================================================
  // Prompts
  // ===================================================================

  let prompts = [];
  let currentPrompt = null;
  let promptForm = null;

  async function loadPrompts() {
    try {
      const data = await api('GET', '/api/prompts');
      prompts = data && Array.isArray(data.prompts) ? data.prompts : [];
    } catch (e) { prompts = []; showError(`prompts: ${e.message}`); }
    renderPrompts();
  }

  function renderPrompts() {
    const words = $('#prompt-search').value.toLowerCase().split(/\s+/).filter(Boolean);
    const list = clear($('#prompt-list'));
    const shown = prompts.filter((p) => matches(p, words, ['name', 'title', 'description']));
    for (const p of shown.slice(0, 2000)) {
      list.append(el('div', { className: 'prompt-row row', dataset: { name: p.name }, title: p.description || p.name },
        el('div', { className: 'row-main mono', text: p.name }),
        el('div', { className: 'row-sub', text: p.title || p.description || '' })));
    }
    if (!shown.length) list.append(el('div', { className: 'empty', text: 'No prompts.' }));
  }

  function selectPrompt(p) {
    currentPrompt = p;
    const d = clear($('#prompt-detail'));
    d.append(el('h2', { className: 'mono', text: p.name }));
    if (p.title) d.append(el('div', { className: 'muted', text: p.title }));
    if (p.description) d.append(el('p', { className: 'description', text: p.description }));
    // Prompt arguments are all strings: express them as an object schema.
    const args = Array.isArray(p.arguments) ? p.arguments : [];
    const schema = { type: 'object', properties: {}, required: args.filter((a) => a.required).map((a) => a.name) };
    for (const a of args) schema.properties[a.name] = { type: 'string', title: a.title, description: a.description };
    promptForm = buildRootForm(schema, {});
    clear($('#prompt-fields')).append(promptForm.el);
    $('#prompt-form').hidden = false;
    hideError($('#prompt-error'));
    clear($('#prompt-result'));
  }

  async function getPrompt(ev) {
    ev.preventDefault();
    if (!currentPrompt) return;
    const errBox = $('#prompt-error');
    hideError(errBox);
    const problems = [];
    promptForm.check(problems);
    if (problems.length) { showError(problems.join('; '), errBox); return; }
    const box = clear($('#prompt-result'));
    $('#prompt-button').disabled = true;
    try {
      const res = await api('POST', '/api/prompt', { name: currentPrompt.name, arguments: promptForm.get() || {} });
      if (res.description) box.append(el('p', { className: 'description', text: res.description }));
      for (const m of Array.isArray(res.messages) ? res.messages : []) {
        const blocks = Array.isArray(m.content) ? m.content : [m.content];
        box.append(el('div', { className: `message role-${m.role}` }, el('span', { className: 'badge', text: m.role || '?' }), ...blocks.map(renderContentBlock)));
      }
      box.append(collapsibleJson('prompt-json', 'Raw JSON', res));
    } catch (e) {
      showError(e.message, errBox);
    } finally {
      $('#prompt-button').disabled = false;
    }
  }

  // ===================================================================
  // Tasks
  // ===================================================================

  const TERMINAL = new Set(['completed', 'failed', 'cancelled']);

  function onTask(msg) {
    const t = msg.task || {};
    if (!t.taskId) return;
    const prev = state.tasks.get(t.taskId);
    state.tasks.set(t.taskId, { task: { ...(prev ? prev.task : {}), ...t }, call: msg.call || (prev && prev.call), updated: new Date() });
    renderTasks();
  }

  // A call's end is its tasks' end too (the client reports no status after its own
  // tasks/cancel, and the last poll may have been before completion).
  function endTasksOf(msg) {
    let changed = false;
    for (const rec of state.tasks.values()) {
      if (rec.call !== msg.call || TERMINAL.has(rec.task.status)) continue;
      const err = msg.error || {};
      // A tool error (isError) is still a completed task; only the call's failure fails it.
      const status = msg.type === 'result' ? 'completed' : (err.cancelled ? 'cancelled' : 'failed');
      rec.task = { ...rec.task, status, statusMessage: msg.type === 'error' ? (err.message || '') : rec.task.statusMessage };
      rec.updated = new Date();
      changed = true;
    }
    if (changed) renderTasks();
  }

  function renderTasks() {
    const body = clear($('#task-list'));
    for (const [id, rec] of state.tasks) {
      const t = rec.task;
      const cancel = !TERMINAL.has(t.status) && rec.call
        ? el('button', { type: 'button', className: 'task-cancel', text: 'Cancel', dataset: { call: rec.call } })
        : null;
      body.append(el('tr', { className: `task-row status-${t.status}`, dataset: { taskId: id, status: t.status || '' } },
        el('td', { className: 'mono', text: id }),
        el('td', {}, el('span', { className: `badge task-status status-${t.status}`, text: t.status || '?' })),
        el('td', { text: t.statusMessage || '' }),
        el('td', { className: 'mono', text: rec.call || '' }),
        el('td', { className: 'mono', text: fmtClock(rec.updated) }),
        el('td', {}, cancel)));
    }
    $('#tasks-empty').hidden = state.tasks.size > 0;
    const active = [...state.tasks.values()].filter((r) => !TERMINAL.has(r.task.status)).length;
    $('#tasks-count').textContent = state.tasks.size ? (active ? `${active}/${state.tasks.size}` : String(state.tasks.size)) : '';
  }

  $('#task-list').addEventListener('click', async (ev) => {
    const btn = ev.target.closest('button.task-cancel');
    if (!btn) return;
    btn.disabled = true;
    try { await api('POST', '/api/cancel', { call: btn.dataset.call }); } catch (e) { btn.disabled = false; showError(`cancel: ${e.message}`); }
  });

  // ===================================================================
  // Listen
  // ===================================================================

  function setListenState(st, error) {
    const s = $('#listen-state');
    s.dataset.state = st;
    s.textContent = error ? String(error) : st;
    s.classList.toggle('error-text', !!error);
    $('#listen-start').disabled = st === 'open';
  }

  async function startListen() {
    const btn = $('#listen-start');
    btn.disabled = true;
    try { await api('POST', '/api/listen', {}); } catch (e) { btn.disabled = false; setListenState('closed', e.message); }
  }

  function onNotification(msg) {
    const feed = $('#listen-feed');
    const stick = feed.scrollTop + feed.clientHeight >= feed.scrollHeight - 20;
    feed.append(el('div', { className: 'event', dataset: { method: msg.method || '' } },
      el('span', { className: 'event-time mono', text: fmtClock() }),
      el('span', { className: 'event-method mono', text: msg.method || '' }),
      el('pre', { className: 'json', text: msg.params === undefined ? '' : pretty(msg.params) })));
    while (feed.childElementCount > 2000) feed.firstElementChild.remove();
    if (stick) feed.scrollTop = feed.scrollHeight;
    // Keep lists fresh when the server says they changed.
    if (msg.method === 'notifications/tools/list_changed') loadTools();
    else if (msg.method === 'notifications/resources/list_changed') loadResources();
    else if (msg.method === 'notifications/prompts/list_changed') loadPrompts();
  }

  // ===================================================================
  // Wire
  // ===================================================================

  const WIRE_ROW = 22;

  const wireList = new VirtualList($('#wire-list'), WIRE_ROW, (e) => {
    const isErr = typeof e.status === 'number' && e.status >= 400;
    const row = el('div', { className: `wire-row wire-cols vrow dir-${e.dir}${isErr ? ' err' : ''}${e.seq === state.selectedSeq ? ' selected' : ''}`, dataset: { seq: String(e.seq) }, title: e.url || '' });
    const what = e.kind === 'http-response' || (e.status != null && !e.method) ? [e.status, e.method].filter((x) => x != null).join(' ') : (e.method || (e.status != null ? String(e.status) : ''));
    row.append(
      el('span', { text: String(e.seq) }),
      el('span', { text: `${(e.at / 1000).toFixed(3)}s` }),
      el('span', { className: 'arrow', text: e.dir === 'out' ? '→' : '←' }),
      el('span', { text: e.kind }),
      el('span', { className: 'what', text: what }),
      el('span', { text: fmtBytes(e.bytes) + (e.truncated ? '…' : '') }),
      el('span', { text: fmtMs(e.elapsedMs) }),
      el('span', { className: 'call', text: e.call || '' }));
    return row;
  }, (row, e) => row.classList.toggle('selected', e.seq === state.selectedSeq));

  function wireHay(e) {
    if (e._hay === undefined) e._hay = `${e.method || ''}\n${e.url || ''}\n${e.status ?? ''}\n${e.body || ''}`.toLowerCase();
    return e._hay;
  }

  const wirePasses = (e) => !state.wireFilter || wireHay(e).includes(state.wireFilter);

  // Apply queued entries once per frame; follow the tail only if already there.
  const flushWire = frameBatcher(() => {
    if (!state.wirePending.length) return;
    const batch = state.wirePending;
    state.wirePending = [];
    for (const e of batch) {
      state.wire.push(e);
      if (state.wireFilter && wirePasses(e)) state.wireView.push(e);
    }
    if (!state.wireFilter) state.wireView = state.wire;
    updateWireCounts();
    wireList.setItems(state.wireView);
    if (wireList.follow) { wireList.scrollToEnd(); wireList.render(false); }
  });

  function updateWireCounts() {
    $('#wire-count').textContent = String(state.wire.length);
    $('#wire-tab-count').textContent = String(state.wire.length);
    $('#wire-shown').textContent = state.wireFilter ? `${state.wireView.length} shown` : '';
  }

  function resetWire() {
    state.wire = [];
    state.wireView = [];
    state.wirePending = [];
    state.selectedSeq = null;
    updateWireCounts();
    wireList.setItems(state.wireView);
    clear($('#wire-detail')).append(el('div', { className: 'empty', text: 'Select an entry.' }));
  }

  function applyWireFilter() {
    state.wireFilter = $('#wire-filter').value.trim().toLowerCase();
    state.wireView = state.wireFilter ? state.wire.filter(wirePasses) : state.wire;
    updateWireCounts();
    wireList.box.scrollTop = 0;
    wireList.setItems(state.wireView);
  }

  function showWireDetail(e) {
    state.selectedSeq = e.seq;
    wireList.render(true);
    const box = clear($('#wire-detail'));
    const title = [e.dir === 'out' ? '→' : '←', e.kind, e.method, e.status, e.url].filter((x) => x != null && x !== '').join(' ');
    box.append(el('h3', { className: 'mono', text: `#${e.seq} ${title}` }));
    const facts = [`at ${(e.at / 1000).toFixed(3)}s`, fmtBytes(e.bytes), fmtMs(e.elapsedMs) || null, e.call ? `call ${e.call}` : null].filter(Boolean);
    box.append(el('div', { className: 'muted', text: facts.join(' · ') }));

    if (e.kind === 'http-request' || (e.dir === 'out' && (e.smcp || e.curl))) {
      const copyText = el('textarea', { id: 'copy-text', readOnly: true, rows: 3, spellcheck: false, placeholder: 'Use a copy button; the command appears here.' });
      const copy = (text) => {
        copyText.value = text || '';
        copyText.focus();
        copyText.select();
        try { if (navigator.clipboard) navigator.clipboard.writeText(copyText.value).catch(() => {}); } catch (err) { /* ignore */ }
      };
      box.append(el('div', { className: 'call-bar' },
        el('button', { type: 'button', id: 'copy-smcp', disabled: !e.smcp, text: 'Copy as smcp', on: { click: () => copy(e.smcp) } }),
        el('button', { type: 'button', id: 'copy-curl', disabled: !e.curl, text: 'Copy as curl', on: { click: () => copy(e.curl) } })), copyText);
    }

    const headers = Array.isArray(e.headers) ? e.headers : [];
    if (headers.length) {
      const tbody = el('tbody');
      for (const h of headers) {
        const value = el('td', { className: 'mono' }, h.value ?? '');
        if (h.mirrored && h.decoded != null) value.append(el('span', { className: 'decoded', text: ` → ${h.decoded}` }));
        tbody.append(el('tr', { className: h.mirrored ? 'mirrored' : '' }, el('td', { className: 'mono hname', text: h.name }), value));
      }
      box.append(el('h4', { text: 'Headers' }), el('table', { className: 'headers grid' }, tbody));
    }
    box.append(el('h4', {}, 'Body', e.truncated ? el('span', { className: 'badge warn', id: 'wire-truncated', text: 'truncated' }) : null));
    box.append(el('pre', { className: 'json wire-body', text: e.body == null ? '(no body)' : prettyBody(e.body) }));
  }

  function prettyBody(body) {
    const t = body.trim();
    if (t.startsWith('{') || t.startsWith('[')) { try { return pretty(JSON.parse(t)); } catch (err) { return body; } }
    return body;
  }

  $('#wire-list').addEventListener('click', (ev) => {
    const row = ev.target.closest('.wire-row');
    if (!row) return;
    const seq = Number(row.dataset.seq);
    const idx = Number(row.style.top.replace('px', '')) / WIRE_ROW;
    const e = state.wireView[idx] && state.wireView[idx].seq === seq ? state.wireView[idx] : state.wire.find((x) => x.seq === seq);
    if (e) showWireDetail(e);
  });

  // ===================================================================
  // Event feed
  // ===================================================================

  const EVENT_TYPES = ['hello', 'wire', 'progress', 'log', 'question', 'question-closed', 'task', 'result', 'error', 'notification', 'listen'];
  let source = null;

  function connectEvents() {
    source = new EventSource('/api/events');
    const es = source;
    es.onopen = () => setStatus(true);
    es.onerror = () => {
      setStatus(false);
      // The browser retries by itself unless the feed was refused; then retry ourselves.
      if (es.readyState === EventSource.CLOSED && source === es) setTimeout(() => { if (source === es) connectEvents(); }, 3000);
    };
    es.onmessage = onFeedMessage;
    // Also accept named events, in case the feed uses `event:` fields.
    for (const t of EVENT_TYPES) es.addEventListener(t, onFeedMessage);
  }

  function onFeedMessage(ev) {
    if (typeof ev.data !== 'string') return; // connection error events carry no data
    let msg;
    try { msg = JSON.parse(ev.data); } catch (e) { return; }
    if (!msg || typeof msg !== 'object') return;
    try { handleEvent(msg); } catch (e) { console.error('event', msg.type, e); }
  }

  function handleEvent(msg) {
    switch (msg.type) {
      case 'hello':
        setStatus(true);
        resetWire();
        state.helloCount += 1;
        if (msg.server) renderServer(msg.server);
        if (state.helloCount > 1) { loadTools(); loadResources(); loadPrompts(); }
        break;
      case 'wire':
        if (msg.entry) { state.wirePending.push(msg.entry); flushWire(); }
        break;
      case 'question': onQuestion(msg); break;
      case 'question-closed': onQuestionClosed(msg); break;
      case 'task':
        onTask(msg);
        if (!handleCallEvent(msg) && state.callInFlight && msg.call) bufferEarly(msg);
        break;
      case 'result': case 'error':
        endTasksOf(msg);
        if (!handleCallEvent(msg) && msg.call) bufferEarly(msg);
        break;
      case 'progress': case 'log':
        if (!handleCallEvent(msg) && msg.call) bufferEarly(msg);
        break;
      case 'notification': onNotification(msg); break;
      case 'listen': setListenState(msg.state, msg.error); break;
      default: break;
    }
  }

  // ===================================================================
  // Wiring + start
  // ===================================================================

  function debounce(fn, ms) {
    let t = null;
    return (...a) => { clearTimeout(t); t = setTimeout(() => fn(...a), ms); };
  }

  for (const b of document.querySelectorAll('button.tab')) b.addEventListener('click', () => showTab(b.dataset.tab));
  $('#tool-search').addEventListener('input', debounce(filterTools, 60));
  $('#tool-search').addEventListener('keydown', (ev) => { if (ev.key === 'Enter' && state.filteredTools.length) selectTool(state.filteredTools[0]); });
  $('#tool-form').addEventListener('submit', startCall);
  // Form edits flow into the JSON view (only edits of the generated fields).
  const fromFields = (ev) => { if ($('#tool-fields').contains(ev.target)) syncFormToJson(); };
  $('#tool-form').addEventListener('input', fromFields);
  $('#tool-form').addEventListener('change', fromFields);
  $('#tool-json').addEventListener('change', () => {
    // Keep the (hidden) form in step with valid JSON edits.
    const p = parseJsonArgs();
    if (!p.error && state.selectedTool) { toolForm = buildRootForm(state.selectedTool.inputSchema, p.value, { onChange: syncFormToJson }); clear($('#tool-fields')).append(toolForm.el); }
  });
  $('#tool-json-toggle').addEventListener('change', onJsonToggle);
  $('#cancel-button').addEventListener('click', cancelCall);
  $('#resource-search').addEventListener('input', debounce(renderResources, 60));
  $('#prompt-search').addEventListener('input', debounce(renderPrompts, 60));
  $('#resource-list').addEventListener('click', (ev) => {
    const row = ev.target.closest('.resource-row');
    if (!row) return;
    selectRow($('#panel-resources'), row);
    clear($('#template-form'));
    readResource(row.dataset.uri);
  });
  $('#template-list').addEventListener('click', (ev) => {
    const row = ev.target.closest('.template-row');
    if (!row) return;
    selectRow($('#panel-resources'), row);
    const t = resources.templates.find((x) => x.uriTemplate === row.dataset.uriTemplate);
    if (t) showTemplateForm(t);
  });
  $('#prompt-list').addEventListener('click', (ev) => {
    const row = ev.target.closest('.prompt-row');
    if (!row) return;
    selectRow($('#prompt-list'), row);
    const p = prompts.find((x) => x.name === row.dataset.name);
    if (p) selectPrompt(p);
  });
  $('#prompt-form').addEventListener('submit', getPrompt);
  $('#listen-start').addEventListener('click', startListen);
  $('#listen-clear').addEventListener('click', () => clear($('#listen-feed')));
  $('#wire-filter').addEventListener('input', debounce(applyWireFilter, 120));

  // For the tests' performance measurements only.
  window.__inspect = {
    wireCount: () => state.wire.length,
    toolCount: () => state.tools.length,
    renderedWireRows: () => document.querySelectorAll('#wire-list .wire-row').length,
    renderedToolRows: () => document.querySelectorAll('#tool-list .tool-row').length,
  };

  showTab('tools');
  renderTasks();
  loadServer();
  loadTools();
  loadResources();
  loadPrompts();
  connectEvents();
})();
