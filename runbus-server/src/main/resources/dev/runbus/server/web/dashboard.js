// runbus dashboard: the few things a page does in the browser. Every action calls the HTTP API's own route
// (which needs the admin scope) with the session's CSRF token; pages themselves only read.
(function () {
  'use strict';
  var csrfMeta = document.querySelector('meta[name="csrf-token"]');
  var csrf = csrfMeta ? csrfMeta.getAttribute('content') : '';

  function flash(text, bad) {
    var f = document.getElementById('flash');
    if (!f) { return; }
    f.textContent = text;
    f.className = bad ? 'flash bad' : 'flash';
    f.hidden = false;
  }

  // One API call: JSON in (an empty object where the route takes no body), JSON or nothing out.
  function call(method, url) {
    var headers = { 'Content-Type': 'application/json', 'Accept': 'application/json' };
    if (csrf) { headers['X-CSRF-Token'] = csrf; }
    return fetch(url, { method: method, headers: headers, credentials: 'same-origin',
                        body: method === 'GET' ? undefined : '{}' })
      .then(function (r) {
        return r.text().then(function (t) {
          var body = null;
          try { body = t ? JSON.parse(t) : null; } catch (e) { body = null; }
          if (!r.ok) { throw new Error((body && body.error) || ('HTTP ' + r.status)); }
          return body;
        });
      });
  }

  // Buttons with data-url act on one thing, after a confirmation naming it.
  document.addEventListener('click', function (e) {
    var b = e.target.closest('button[data-url]');
    if (!b) { return; }
    if (b.dataset.confirm && !window.confirm(b.dataset.confirm)) { return; }
    b.disabled = true;
    call(b.dataset.method || 'POST', b.dataset.url)
      .then(function () { flash('Done: ' + b.textContent.trim().toLowerCase() + '.'); setTimeout(function () { location.reload(); }, 400); })
      .catch(function (err) { b.disabled = false; flash('Refused: ' + err.message, true); });
  });

  // Dead letters: replay a selection, one call each, and say what happened to each.
  var selectAll = document.getElementById('select-all');
  if (selectAll) {
    selectAll.addEventListener('change', function () {
      document.querySelectorAll('input.select').forEach(function (c) { c.checked = selectAll.checked; });
    });
  }
  var bulk = document.getElementById('replay-selected');
  if (bulk) {
    bulk.addEventListener('click', function () {
      var ids = Array.prototype.map.call(document.querySelectorAll('input.select:checked'), function (c) { return c.value; });
      if (ids.length === 0) { flash('Select dead letters first.', true); return; }
      if (!window.confirm('Replay ' + ids.length + ' dead letter' + (ids.length === 1 ? '' : 's') + '?')) { return; }
      bulk.disabled = true;
      var topic = bulk.dataset.topic, done = 0, failed = [];
      ids.reduce(function (p, id) {
        return p.then(function () {
          return call('POST', '/v1/dead-letters/' + encodeURIComponent(id) + '/replay?topic=' + encodeURIComponent(topic))
            .then(function () { done++; }, function (err) { failed.push(id + ': ' + err.message); });
        });
      }, Promise.resolve()).then(function () {
        flash('Replayed ' + done + ' of ' + ids.length + '.' + (failed.length ? ' Refused: ' + failed.join('; ') : ''), failed.length > 0);
        if (failed.length === 0) { setTimeout(function () { location.reload(); }, 600); } else { bulk.disabled = false; }
      });
    });
  }

  document.querySelectorAll('select.autosubmit').forEach(function (s) {
    s.addEventListener('change', function () { s.form.submit(); });
  });

  // A run's page follows the run's events while it is not finished.
  var run = document.getElementById('run');
  if (run && run.dataset.follow && window.EventSource) {
    var live = document.getElementById('live');
    var es = new EventSource(run.dataset.follow);
    // "live" once events arrive (a stream begins with the run's status), not as soon as the stream opens.
    es.addEventListener('status', function (ev) {
      var d = JSON.parse(ev.data);
      if (live) { live.hidden = false; }
      var s = document.getElementById('run-status');
      s.textContent = d.status;
      s.className = 'status status-' + d.status;
      document.getElementById('run-attempts').textContent = d.attempts;
      document.getElementById('run-error').textContent = d.error || '';
      document.getElementById('run-next-attempt').textContent = d.next_attempt_at || '—';
    });
    es.addEventListener('reply', function (ev) {
      var d = JSON.parse(ev.data);
      var row = document.createElement('tr');
      row.className = 'reply';
      [String(d.seq), d.role].forEach(function (t) { var c = document.createElement('td'); c.textContent = t; row.appendChild(c); });
      var c = document.createElement('td'), pre = document.createElement('pre');
      pre.textContent = d.content;
      c.appendChild(pre);
      row.appendChild(c);
      document.querySelector('#replies tbody').appendChild(row);
    });
    es.addEventListener('end', function () { es.close(); if (live) { live.hidden = true; } setTimeout(function () { location.reload(); }, 300); });
    es.onerror = function () { if (live) { live.hidden = true; } };
  }

  // The overview's chart: this server's publish and ack rates, redrawn every 5 s. Its time axis spans the window the
  // server names (the last ten minutes), whatever the samples: from the samples alone uPlot spans a lone one with
  // 1000 days (its one-point range is a day counted in milliseconds, and these times are seconds), and a few with
  // as many seconds.
  var chart = document.getElementById('rates-chart');
  if (chart && window.uPlot) {
    var plot = null, latest = null;
    var draw = function () {
      call('GET', chart.dataset.src).then(function (d) {
        var data = [d.t, d.published, d.acked];
        latest = d;
        if (!plot) {
          plot = new uPlot({ width: Math.min(940, chart.clientWidth - 16), height: 240,
            scales: { x: { time: true,
              range: function () { return [latest.until - latest.window_seconds, latest.until]; } } },
            series: [{}, { label: 'published/s', stroke: '#2952cc', width: 2 },
                     { label: 'acked/s', stroke: '#2e7d32', width: 2 }],
            axes: [{}, { label: 'messages/s' }] }, data, chart);
          chart.uplot = plot; // for the browser's console and the dashboard's tests
        } else {
          plot.setData(data);
        }
      }).catch(function () { /* the next round tries again */ });
    };
    draw();
    setInterval(draw, 5000);
  }
})();
