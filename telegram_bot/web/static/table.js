/* The Hokm table: draws one seat's view (from /api/game/<id>), plays by tapping,
 * and follows the game live (an event stream read with fetch, so that initData
 * travels in a header and never in a URL). Vanilla JS, no build step. */
(function () {
  'use strict';
  var TG = (window.Telegram && window.Telegram.WebApp) || null;
  var $ = function (id) { return document.getElementById(id); };
  var SUITS = { S: 'spades', H: 'hearts', D: 'diamonds', C: 'clubs' };
  var CROWN = '<svg viewBox="0 0 24 24" aria-hidden="true"><path fill="#7a4b00" d="M2 8l5 4 5-7 5 7 5-4-2 11H4z"/></svg>';

  var state = {
    game: null, view: null, texts: {}, lang: 'fa', rtl: true,
    // The deck style: kept per user on the server (/api/prefs); this device's last
    // choice until the server's answer comes.
    deck: localStorageGet('hokm.deck') || 'classic', deckFromUrl: false,
    picked: [], busy: false, clockOffset: 0, lastShownTrick: null, sweepTimer: null
  };

  function localStorageGet(k) { try { return localStorage.getItem(k); } catch (e) { return null; } }
  function localStorageSet(k, v) { try { localStorage.setItem(k, v); } catch (e) { /* private mode */ } }

  function el(tag, attrs, children) {
    var e = document.createElement(tag);
    if (attrs) {
      Object.keys(attrs).forEach(function (k) {
        var v = attrs[k];
        if (v === null || v === undefined || v === false) return;
        if (k === 'text') e.textContent = v;
        else if (k === 'class') e.className = v;
        else if (k === 'style') Object.keys(v).forEach(function (p) { e.style.setProperty(p, v[p]); });
        else if (k.slice(0, 2) === 'on') e.addEventListener(k.slice(2), v);
        else e.setAttribute(k, v === true ? '' : v);
      });
    }
    (children || []).forEach(function (c) { if (c) e.appendChild(typeof c === 'string' ? document.createTextNode(c) : c); });
    return e;
  }
  function digits(x) {
    var s = String(x);
    return state.lang === 'fa' ? s.replace(/[0-9]/g, function (d) { return '۰۱۲۳۴۵۶۷۸۹'[d]; }) : s;
  }
  function t(key, vars) {
    var s = state.texts[key] || key;
    // Names and numbers isolated (FSI … PDI), so a Latin name keeps its place in Persian.
    if (vars) Object.keys(vars).forEach(function (k) { s = s.split('{' + k + '}').join('\u2068' + vars[k] + '\u2069'); });
    return s;
  }
  function cardUrl(c) { return '/cards/' + state.deck + '/' + c + '.svg'; }
  function suitUrl(s) { return '/cards/suit/' + state.deck + '/' + s + '.svg'; }
  function haptic(kind, arg) {
    try {
      var h = TG && TG.HapticFeedback;
      if (!h) return;
      if (kind === 'impact') h.impactOccurred(arg || 'light');
      else if (kind === 'notify') h.notificationOccurred(arg || 'success');
      else h.selectionChanged();
    } catch (e) { /* not in Telegram */ }
  }

  // ------------------------------------------------------------------ theme
  function applyScheme() {
    var dark = TG ? TG.colorScheme === 'dark'
      : (window.matchMedia && matchMedia('(prefers-color-scheme: dark)').matches);
    document.documentElement.classList.toggle('dark', !!dark);
  }

  // ------------------------------------------------------------------ geometry
  // Seats around the table, from the viewer (at the bottom), in playing order.
  var POSITIONS = {
    2: ['bottom', 'top'],
    3: ['bottom', 'top-right', 'top-left'],
    4: ['bottom', 'right', 'top', 'left']
  };
  // Where a seat's card lies in the trick (dx, dy in card sizes, rotation), sized
  // to the felt by layout().
  var SPOTS = {
    bottom: [0, 0.62, 0], top: [0, -0.62, 0], left: [-0.95, 0, -6], right: [0.95, 0, 6],
    'top-left': [-0.62, -0.36, -8], 'top-right': [0.62, -0.36, 8]
  };
  var geo = { tw: 64, th: 90 };
  function layout() {
    var f = $('felt').getBoundingClientRect();
    if (!f.width) return;
    var top = 128, bottom = 64;
    var tw = Math.floor(Math.max(44, Math.min(78, (f.width - 170) / 2.9, (f.height - top - bottom) / 3.2)));
    geo = { tw: tw, th: tw * 1.4 };
    var felt = $('felt').style;
    felt.setProperty('--trick-w', tw + 'px');
    felt.setProperty('--cy', Math.round(top + (f.height - top - bottom) / 2) + 'px');
  }
  function offsets(pos) {
    var s = SPOTS[pos];
    return [Math.round(s[0] * geo.tw), Math.round(s[1] * geo.th), s[2]];
  }
  function posOf(seat) {
    var v = state.view, n = v.variant.players;
    var you = v.you === null ? 0 : v.you;
    return POSITIONS[n][(seat - you + n) % n];
  }
  function nameOf(seat) {
    var v = state.view;
    return seat === v.you ? t('you') : v.seats[seat].name;
  }

  // ------------------------------------------------------------------ drawing
  function render() {
    var v = state.view;
    if (!v) return;
    $('app').classList.remove('loading');
    layout();
    renderBar(v);
    renderSeats(v);
    renderTrick(v);
    renderLast(v);
    renderStatus(v);
    renderPanel(v);
    renderHand(v);
  }

  function sideLabel(v, side) {
    if (v.variant.teams) return v.you !== null && v.seats[v.you].side === side ? t('us') : t('them');
    return nameOf(side);
  }
  function renderBar(v) {
    var box = $('scores');
    box.textContent = '';
    box.dataset.n = v.sides.length;
    // The viewer's side first.
    var mine = v.you === null ? 0 : v.seats[v.you].side;
    var order = v.sides.map(function (_, i) { return (mine + i) % v.sides.length; });
    order.forEach(function (i) {
      var s = v.sides[i];
      box.appendChild(el('div', { class: 'score', style: { '--side': 'var(--side-' + i + ')' }, 'data-side': i }, [
        el('span', { class: 'who', text: sideLabel(v, i) }),
        el('span', { class: 'pts', text: digits(s.score) }),
        // Three boxes leave no room for the word: the tick the seats use for tricks.
        el('span', { class: 'tr', title: t('tricks'),
          text: (v.sides.length > 2 ? '✓' : t('tricks') + ' ') + digits(s.tricks) })
      ]));
    });
    box.appendChild(el('span', { class: 'target', text: t('target', { target: digits(v.variant.target) }) }));
    var trump = $('trump');
    trump.textContent = '';
    if (v.trump) {
      trump.hidden = false;
      trump.appendChild(el('span', { text: t('trump') }));
      trump.appendChild(el('img', { src: suitUrl(v.trump), alt: t(SUITS[v.trump]), 'data-trump': v.trump }));
    } else {
      trump.hidden = true;
    }
    var deck = $('deck');
    deck.textContent = '';
    deck.title = t('deck') + ': ' + t(state.deck === 'four' ? 'deck_four' : 'deck_classic');
    deck.appendChild(el('img', { src: cardUrl('AD'), alt: '' }));
  }

  function renderSeats(v) {
    var box = $('seats');
    box.textContent = '';
    var now = Date.now() / 1000 + state.clockOffset;
    v.seats.forEach(function (s) {
      var pos = posOf(s.seat);
      var classes = 'seat' + (v.turn === s.seat && v.phase !== 'over' ? ' turn' : '') + (s.away ? ' away' : '');
      var avatar = el('div', { class: 'avatar', style: { '--side': 'var(--side-' + s.side + ')' } },
        [document.createTextNode((s.name || '?').trim().charAt(0).toUpperCase() || '?')]);
      if (v.hakem === s.seat && v.variant.kind !== 'bidding') {
        var b = el('span', { class: 'badge', title: t('hakem'), 'data-hakem': '' });
        b.innerHTML = CROWN;
        avatar.appendChild(b);
      }
      if (v.turn === s.seat && v.deadline && v.phase !== 'over') {
        avatar.appendChild(ring(v.deadline, now));
      }
      var meta = el('div', { class: 'meta' }, [
        el('span', { class: 'pill', title: t('tricks'), text: '✓' + digits(s.tricks) }),
        s.bid !== null && s.bid !== undefined ? el('span', { class: 'pill', text: t('bid') + ' ' + digits(s.bid) }) : null,
        s.bot ? el('span', { class: 'pill', text: t('computer') }) : null,
        s.away ? el('span', { class: 'pill', text: t('away') }) : null
      ]);
      var children = [avatar, el('div', { class: 'name', text: nameOf(s.seat) }), meta];
      if (pos !== 'bottom' && s.cards > 0) {
        // Their cards, face down, held as a fan.
        var backs = el('div', { class: 'backs', title: digits(s.cards), 'data-count': s.cards });
        var k = Math.min(s.cards, 13);
        for (var i = 0; i < k; i++) {
          backs.appendChild(el('img', { src: '/cards/back/blue.svg', alt: '',
            style: { transform: 'translateX(-50%) rotate(' + ((i - (k - 1) / 2) * 7) + 'deg)' } }));
        }
        children.push(backs);
      }
      box.appendChild(el('div', { class: classes, 'data-pos': pos, 'data-seat': s.seat }, children));
    });
  }

  function ring(deadline, now) {
    // The turn's length: from when this deadline was first seen.
    if (state.deadline !== deadline) { state.deadline = deadline; state.turnLength = Math.max(5, deadline - now); }
    var total = state.turnLength, left = Math.max(0, deadline - now);
    var r = 26, c = 2 * Math.PI * r;
    var svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
    svg.setAttribute('class', 'ring' + (left < 8 ? ' low' : ''));
    svg.setAttribute('viewBox', '0 0 58 58');
    var circle = document.createElementNS('http://www.w3.org/2000/svg', 'circle');
    circle.setAttribute('cx', 29); circle.setAttribute('cy', 29); circle.setAttribute('r', r);
    circle.setAttribute('stroke-dasharray', c);
    circle.setAttribute('stroke-dashoffset', c * (1 - Math.min(1, left / total)));
    svg.appendChild(circle);
    return svg;
  }

  function trickCard(v, seat, card, isNew, win) {
    var o = offsets(posOf(seat));
    return el('div', {
      class: 'tc' + (isNew ? ' new' : '') + (win ? ' win' : ''), 'data-seat': seat, 'data-card': card,
      style: { '--dx': o[0] + 'px', '--dy': o[1] + 'px', '--rot': o[2] + 'deg',
        '--fx': o[0] * 3 + 'px', '--fy': o[1] * 3 + 'px' }
    }, [el('img', { src: cardUrl(card), alt: card }), el('span', { class: 'who', text: nameOf(seat) })]);
  }

  function renderTrick(v) {
    var box = $('trick');
    var last = v.last_trick, key = v.hand_no + ':' + v.tricks_played;
    // The trick just completed is on the table, or being swept: a second drawing of
    // the same state (the play's answer, then its live event) leaves it be.
    if (!v.trick.length && last && box.dataset.showing === key) return;
    delete box.dataset.showing;
    var before = {};
    Array.prototype.forEach.call(box.querySelectorAll('.tc'), function (e) { before[e.dataset.card] = true; });
    var shown = box.dataset.hand === String(v.hand_no) && box.dataset.count === String(v.tricks_played);
    clearTimeout(state.sweepTimer);
    box.classList.remove('sweep');
    box.textContent = '';
    var note = $('centre-note');
    note.textContent = '';
    // A trick just completed: leave it on the table a moment, then sweep it to its winner.
    if (!v.trick.length && last && !shown && state.lastShownTrick !== key) {
      state.lastShownTrick = key;
      box.dataset.showing = key;
      last.plays.forEach(function (p) { box.appendChild(trickCard(v, p.seat, p.card, !before[p.card], p.seat === last.winner)); });
      var w = offsets(posOf(last.winner));
      box.style.setProperty('--sx', w[0] * 4 + 'px');
      box.style.setProperty('--sy', w[1] * 4 + 'px');
      state.sweepTimer = setTimeout(function () {
        box.classList.add('sweep');
        var now = state.view;
        if (now && now.phase === 'over' && !now.trick.length) note.textContent = overText(now);
      }, 1100);
      box.dataset.hand = v.hand_no;
      box.dataset.count = v.tricks_played;
      return;
    }
    box.dataset.hand = v.hand_no;
    box.dataset.count = v.tricks_played;
    v.trick.forEach(function (p) { box.appendChild(trickCard(v, p.seat, p.card, !before[p.card], false)); });
    if (!v.trick.length) {
      if (v.phase === 'trump' && v.turn !== v.you) note.textContent = t('no_trump_yet');
      else if (v.phase === 'over') note.textContent = overText(v);
    }
  }

  function overText(v) {
    if (v.winner === null || v.winner === undefined) return t('match_over');
    if (v.you !== null && v.seats[v.you].side === v.winner) return t('we_won');
    return t('they_won', { name: sideLabel(v, v.winner) });
  }

  function renderLast(v) {
    var box = $('last');
    box.textContent = '';
    var last = v.last_trick;
    if (!last || !v.trick.length) { box.hidden = true; return; }
    box.hidden = false;
    box.appendChild(el('div', { text: t('last_trick') }));
    var mini = el('div', { class: 'mini' });
    last.plays.forEach(function (p) {
      mini.appendChild(el('img', { src: cardUrl(p.card), alt: p.card, class: p.seat === last.winner ? 'win' : null, title: nameOf(p.seat) }));
    });
    box.appendChild(mini);
  }

  function renderStatus(v) {
    var status = $('status');
    var mine = v.turn !== null && v.turn === v.you && v.phase !== 'over';
    status.classList.toggle('mine', mine);
    var text = '';
    if (v.phase === 'over') text = overText(v);
    else if (mine) text = t('your_turn');
    else if (v.turn !== null) text = t('turn_of', { name: nameOf(v.turn) });
    $('status-text').textContent = text;
    tick();
  }

  function tick() {
    var v = state.view, timer = $('timer');
    if (!v || !v.deadline || v.phase === 'over') { timer.textContent = ''; return; }
    var left = Math.max(0, Math.round(v.deadline - (Date.now() / 1000 + state.clockOffset)));
    timer.textContent = digits(left);
    timer.classList.toggle('low', left <= 8);
  }

  function renderPanel(v) {
    var panel = $('panel');
    panel.textContent = '';
    var legal = v.legal || {};
    var shown = true;
    if (legal.trump) {
      panel.appendChild(el('div', { class: 'caption', text: t('choose_trump') }));
      legal.trump.forEach(function (s) {
        panel.appendChild(el('button', {
          class: 'suit-btn', type: 'button', 'data-suit': s, 'aria-label': t(SUITS[s]),
          onclick: function () { send({ type: 'trump', suit: s }); }
        }, [el('img', { src: suitUrl(s), alt: '' })]));
      });
    } else if (legal.draw) {
      if (legal.draw.top) panel.appendChild(el('img', { class: 'top-card', src: cardUrl(legal.draw.top), alt: legal.draw.top }));
      // The card shown, and beside it the two answers, one over the other.
      panel.appendChild(el('div', { class: 'choices' }, [
        el('button', { class: 'btn', type: 'button', text: t('keep'), onclick: function () { send({ type: 'draw', keep: true }); } }),
        el('button', { class: 'btn alt', type: 'button', text: t('take_next'), onclick: function () { send({ type: 'draw', keep: false }); } })
      ]));
    } else if (legal.discard || legal.exchange) {
      var need = legal.discard ? legal.discard.count : null;
      var max = legal.exchange ? legal.exchange.max : need;
      panel.appendChild(el('div', { class: 'caption', text: t(legal.discard ? 'discard_two' : 'exchange_up_to') }));
      var ok = need === null ? state.picked.length <= max : state.picked.length === need;
      panel.appendChild(el('button', {
        class: 'btn', type: 'button', text: t('confirm'), disabled: !ok,
        onclick: function () { send({ type: legal.discard ? 'discard' : 'exchange', cards: state.picked.slice() }); }
      }));
    } else if (legal.blind) {
      panel.appendChild(el('button', { class: 'btn', type: 'button', text: t('blind_nil'), onclick: function () { send({ type: 'blind', blind: true }); } }));
      panel.appendChild(el('button', { class: 'btn alt', type: 'button', text: t('not_blind'), onclick: function () { send({ type: 'blind', blind: false }); } }));
    } else if (legal.bid) {
      panel.appendChild(el('div', { class: 'caption', text: t('bid') }));
      legal.bid.forEach(function (n) {
        panel.appendChild(el('button', { class: 'btn alt bid-btn', type: 'button', text: digits(n), onclick: function () { send({ type: 'bid', tricks: n }); } }));
      });
    } else {
      shown = false;
    }
    panel.hidden = !shown;
  }

  function renderHand(v) {
    var box = $('hand');
    box.textContent = '';
    var legal = (v.legal && v.legal.play) || [];
    var picking = !!(v.legal && (v.legal.discard || v.legal.exchange));
    state.picked = state.picked.filter(function (c) { return v.hand.indexOf(c) >= 0; });
    var mine = v.turn === v.you && (legal.length > 0 || picking);
    box.classList.toggle('my-turn', mine && !picking);
    var width = box.clientWidth || 360;
    var cw = Math.min(84, Math.max(52, Math.floor(width / 4.6)));
    document.documentElement.style.setProperty('--card-w', cw + 'px');
    var k = v.hand.length;
    var step = k > 1 ? Math.min(cw * 0.66, (width - cw) / (k - 1)) : 0;
    var left0 = (width - (cw + step * (k - 1))) / 2;
    v.hand.forEach(function (c, i) {
      var isLegal = legal.indexOf(c) >= 0;
      box.appendChild(el('button', {
        class: 'card' + (isLegal ? ' legal' : '') + (state.picked.indexOf(c) >= 0 ? ' picked' : ''),
        type: 'button', 'data-card': c, 'aria-label': c, 'aria-disabled': mine && !isLegal && !picking ? 'true' : null,
        style: { left: Math.round(left0 + i * step) + 'px', 'z-index': i + 1 },
        onclick: function (ev) { tapCard(c, ev.currentTarget); }
      }, [el('img', { src: cardUrl(c), alt: c, draggable: 'false' })]));
    });
  }

  // ------------------------------------------------------------------ acting
  function toast(text) {
    var box = $('toast');
    box.textContent = text;
    box.hidden = false;
    clearTimeout(toast.timer);
    toast.timer = setTimeout(function () { box.hidden = true; }, 2200);
  }

  function tapCard(card, node) {
    var v = state.view;
    if (!v || state.busy) return;
    var legal = v.legal || {};
    if (legal.discard || legal.exchange) {
      var i = state.picked.indexOf(card);
      if (i >= 0) state.picked.splice(i, 1); else state.picked.push(card);
      haptic('select');
      renderPanel(v);
      renderHand(v);
      return;
    }
    if (legal.play && legal.play.indexOf(card) >= 0) {
      haptic('impact', 'light');
      send({ type: 'play', card: card });
      return;
    }
    // Not playable: say why, play nothing.
    haptic('notify', 'warning');
    node.classList.remove('shake');
    void node.offsetWidth;
    node.classList.add('shake');
    if (v.turn !== v.you) toast(t('not_your_turn'));
    else if (legal.play && v.trick.length) toast(t('must_follow_suit', { suit: t(SUITS[v.trick[0].card.slice(-1)]) }));
    else if (legal.play && v.variant.kind === 'bidding') toast(t('spades_not_broken'));
    else toast(t('wrong_phase'));
  }

  function authHeaders() {
    return { Authorization: 'tma ' + (TG ? TG.initData : '') };
  }

  function send(action, move) {
    var v = state.view;
    if (move === undefined) {
      if (!v || state.busy) return;
      move = v.move;
    }
    state.busy = true;
    fetch('/api/game/' + encodeURIComponent(state.game) + '/play', {
      method: 'POST',
      headers: Object.assign({ 'Content-Type': 'application/json' }, authHeaders()),
      body: JSON.stringify({ move: move, action: action })
    }).then(function (r) {
      return r.json().then(function (body) { return { status: r.status, body: body }; });
    }).then(function (res) {
      if (res.status === 503) {
        // The server's database was busy and stored nothing: the same move again
        // (at the same move number: if it was stored after all, that is a 409).
        toast(t('reconnecting'));
        return sleep(1000).then(function () { send(action, move); });
      }
      state.busy = false;
      if (res.status === 200) { state.picked = []; show(res.body.view); return; }
      var code = res.body && res.body.error;
      if (res.status === 401) { expired(); return; }
      haptic('notify', 'error');
      toast(t(code === 'must_follow_suit' ? 'must_follow_suit' : code, { suit: '' }));
      if (res.status === 409) load();
    }).catch(function () {
      state.busy = false;
      toast(t('reconnecting'));
    });
  }

  function saveDeck(deck) {
    // Kept for this user on every device; a failure leaves this device's choice.
    fetch('/api/prefs', {
      method: 'POST',
      headers: Object.assign({ 'Content-Type': 'application/json' }, authHeaders()),
      body: JSON.stringify({ deck: deck })
    }).then(function (r) {
      if (r.ok) document.documentElement.dataset.deckSaved = deck;
    }).catch(function () { /* offline: kept on this device */ });
  }

  function show(view) {
    if (!view || (state.view && view.move < state.view.move && view.game === state.view.game)) return;
    var was = state.view;
    state.view = view;
    render();
    if (view.turn === view.you && view.phase !== 'over' && (!was || was.turn !== view.you || was.move !== view.move) && !(was && was.turn === view.you)) {
      haptic('impact', 'medium');
    }
  }

  // ------------------------------------------------------------------ loading
  function notice(text) {
    var box = $('notice');
    box.textContent = text;
    box.hidden = false;
    $('app').classList.remove('loading');
  }
  function expired() { notice(t('expired')); stopped = true; }

  function loadTexts(lang) {
    return fetch('/texts/' + lang + '.json').then(function (r) { return r.json(); }).then(function (body) {
      state.texts = body.texts; state.lang = body.lang; state.rtl = body.rtl;
      document.documentElement.lang = body.lang;
      document.documentElement.dir = body.rtl ? 'rtl' : 'ltr';
      document.title = t('title');
    });
  }

  function load() {
    return fetch('/api/game/' + encodeURIComponent(state.game), { headers: authHeaders(), cache: 'no-store' })
      .then(function (r) { return r.json().then(function (body) { return { status: r.status, body: body }; }); })
      .then(function (res) {
        if (res.status !== 200) {
          var code = res.body && res.body.error;
          return (state.texts.title ? Promise.resolve() : loadTexts(guessLang())).then(function () {
            notice(t(res.status === 401 ? 'expired' : code === 'not_seated' ? 'not_seated' : 'no_such_game'));
            stopped = true;
          });
        }
        if (typeof res.body.now === 'number') state.clockOffset = res.body.now - Date.now() / 1000;
        var kept = res.body.prefs && res.body.prefs.deck;
        if (kept && !state.deckFromUrl && kept !== state.deck) {
          state.deck = kept;
          localStorageSet('hokm.deck', kept);
        }
        var lang = (new URLSearchParams(location.search)).get('lang') || res.body.lang;
        return (state.lang === lang && state.texts.title ? Promise.resolve() : loadTexts(lang)).then(function () {
          show(res.body.view);
        });
      });
  }

  // ------------------------------------------------------------------ live
  var stopped = false;
  function sleep(ms) { return new Promise(function (r) { setTimeout(r, ms); }); }
  function live() {
    if (stopped) return;
    var headers = authHeaders();
    if (state.view) headers['Last-Event-ID'] = String(state.view.move);
    fetch('/api/game/' + encodeURIComponent(state.game) + '/events', { headers: headers, cache: 'no-store' })
      .then(function (r) {
        if (r.status === 401) { expired(); return; }
        if (!r.ok || !r.body) throw new Error('stream ' + r.status);
        document.body.classList.remove('offline');
        var reader = r.body.getReader(), decoder = new TextDecoder(), buf = '';
        function pump() {
          return reader.read().then(function (chunk) {
            if (chunk.done) return;
            buf += decoder.decode(chunk.value, { stream: true });
            var i;
            while ((i = buf.indexOf('\n\n')) >= 0) {
              handleEvent(buf.slice(0, i));
              buf = buf.slice(i + 2);
            }
            return pump();
          });
        }
        return pump();
      })
      .catch(function () { /* reconnect below */ })
      .then(function () {
        if (stopped) return;
        return sleep(1000 + Math.random() * 1500).then(live);
      });
  }
  function handleEvent(block) {
    var type = 'message', data = [];
    block.split('\n').forEach(function (line) {
      if (line.indexOf('event:') === 0) type = line.slice(6).trim();
      else if (line.indexOf('data:') === 0) data.push(line.slice(5).replace(/^ /, ''));
    });
    if (!data.length) return;
    var body;
    try { body = JSON.parse(data.join('\n')); } catch (e) { return; }
    if (type === 'view') show(body);
    else if (type === 'error' && body.error === 'stale') expired();
  }

  // ------------------------------------------------------------------ start
  function guessLang() {
    var u = TG && TG.initDataUnsafe && TG.initDataUnsafe.user;
    var code = (u && u.language_code) || navigator.language || 'fa';
    return /^(fa|prs|ps)\b/i.test(code) ? 'fa' : (/^en\b/i.test(code) ? 'en' : 'fa');
  }

  function start() {
    applyScheme();
    if (TG) {
      try { TG.ready(); TG.expand(); } catch (e) { /* not in Telegram */ }
      if (TG.onEvent) TG.onEvent('themeChanged', applyScheme);
    }
    var params = new URLSearchParams(location.search);
    state.game = params.get('game') || (TG && TG.initDataUnsafe && TG.initDataUnsafe.start_param) || '';
    if (params.get('deck')) { state.deck = params.get('deck'); state.deckFromUrl = true; }
    $('deck').addEventListener('click', function () {
      state.deck = state.deck === 'four' ? 'classic' : 'four';
      state.deckFromUrl = false;
      localStorageSet('hokm.deck', state.deck);
      haptic('select');
      render();
      saveDeck(state.deck);
    });
    window.addEventListener('resize', function () { if (state.view) render(); });
    setInterval(function () { tick(); }, 500);
    if (!TG || !TG.initData) {
      loadTexts(guessLang()).then(function () { notice(t('open_in_telegram')); });
      return;
    }
    if (!state.game) {
      loadTexts(guessLang()).then(function () { notice(t('no_such_game')); });
      return;
    }
    load().then(live, function () { toast(t('reconnecting')); setTimeout(start, 2000); });
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
