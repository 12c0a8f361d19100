/* A small stand-in for Telegram's telegram-web-app.js, served by the bot itself
 * (telegram.org is filtered for many players). It provides the part of
 * window.Telegram.WebApp the table uses:
 *   initData, initDataUnsafe, themeParams, colorScheme, platform, version,
 *   ready(), expand(), HapticFeedback, onEvent/offEvent('themeChanged'),
 *   setHeaderColor(), setBackgroundColor().
 * Telegram opens a Mini App with its data in the URL fragment (#tgWebAppData=...,
 * tgWebAppThemeParams, tgWebAppVersion, tgWebAppPlatform, tgWebAppStartParam) and
 * talks to it through "web events": the page posts with
 * TelegramWebviewProxy.postEvent (mobile apps), window.external.notify (desktop) or
 * postMessage to the parent frame (Telegram Web); the client answers by calling
 * Telegram.WebView.receiveEvent(type, data) or with a message to the frame.
 * If the real script was loaded first, this one leaves it alone. */
(function () {
  'use strict';
  if (window.Telegram && window.Telegram.WebApp && window.Telegram.WebApp.initData !== undefined) {
    return;
  }

  function decode(s) {
    try { return decodeURIComponent(s.replace(/\+/g, '%20')); } catch (e) { return s; }
  }
  function parseQuery(q) {
    var out = {};
    if (!q) return out;
    q.split('&').forEach(function (part) {
      if (!part) return;
      var i = part.indexOf('=');
      var k = decode(i < 0 ? part : part.slice(0, i));
      out[k] = i < 0 ? '' : decode(part.slice(i + 1));
    });
    return out;
  }
  function parseJSON(s, fallback) {
    try { var v = JSON.parse(s); return v && typeof v === 'object' ? v : fallback; } catch (e) { return fallback; }
  }

  var hash = (location.hash || '').replace(/^#/, '');
  var q = hash.indexOf('?');
  if (q >= 0 && hash.slice(0, q).indexOf('=') < 0) hash = hash.slice(q + 1);
  var params = parseQuery(hash);
  // Keep them for reloads inside the same view (the fragment may be rewritten).
  try {
    if (params.tgWebAppData) sessionStorage.setItem('hokm.tgParams', JSON.stringify(params));
    else params = parseJSON(sessionStorage.getItem('hokm.tgParams') || '{}', {});
  } catch (e) { /* storage may be off */ }

  var initData = params.tgWebAppData || '';
  var fields = parseQuery(initData);
  var unsafe = {};
  Object.keys(fields).forEach(function (k) {
    unsafe[k] = (k === 'user' || k === 'receiver' || k === 'chat') ? parseJSON(fields[k], null) : fields[k];
  });
  if (params.tgWebAppStartParam && !unsafe.start_param) unsafe.start_param = params.tgWebAppStartParam;

  var isIframe = false;
  try { isIframe = window.parent != null && window !== window.parent; } catch (e) { isIframe = false; }

  var handlers = {};
  function receiveEvent(type, data) {
    (handlers[type] || []).slice().forEach(function (h) {
      try { h(type, data); } catch (e) { console.error(e); }
    });
  }
  function postEvent(type, data) {
    var payload = data === undefined ? '' : data;
    try {
      if (window.TelegramWebviewProxy !== undefined) {
        window.TelegramWebviewProxy.postEvent(type, JSON.stringify(payload));
      } else if (window.external && 'notify' in window.external) {
        window.external.notify(JSON.stringify({ eventType: type, eventData: payload }));
      } else if (isIframe) {
        window.parent.postMessage(JSON.stringify({ eventType: type, eventData: payload }), '*');
      }
    } catch (e) { /* outside Telegram: nothing to tell */ }
  }
  if (isIframe) {
    window.addEventListener('message', function (ev) {
      if (ev.source !== window.parent) return;
      var msg = parseJSON(ev.data, null);
      if (msg && msg.eventType) receiveEvent(msg.eventType, msg.eventData);
    });
  }
  window.Telegram = window.Telegram || {};
  window.Telegram.WebView = {
    initParams: params, isIframe: isIframe, postEvent: postEvent, receiveEvent: receiveEvent,
    onEvent: function (t, h) { (handlers[t] = handlers[t] || []).push(h); },
    offEvent: function (t, h) { handlers[t] = (handlers[t] || []).filter(function (x) { return x !== h; }); }
  };
  // Older clients call these names.
  window.TelegramGameProxy = { receiveEvent: receiveEvent };
  window.TelegramGameProxy_receiveEvent = receiveEvent;

  function luminance(hex) {
    var m = /^#?([0-9a-f]{6})$/i.exec(hex || '');
    if (!m) return 1;
    var n = parseInt(m[1], 16);
    return (0.2126 * (n >> 16 & 255) + 0.7152 * (n >> 8 & 255) + 0.0722 * (n & 255)) / 255;
  }
  var webAppHandlers = {};
  function emit(name) {
    (webAppHandlers[name] || []).slice().forEach(function (h) { try { h.call(WebApp); } catch (e) { console.error(e); } });
  }
  function applyTheme(theme) {
    WebApp.themeParams = theme || {};
    var root = document.documentElement.style;
    Object.keys(WebApp.themeParams).forEach(function (k) {
      var v = WebApp.themeParams[k];
      if (typeof v === 'string' && /^#[0-9a-f]{3,8}$/i.test(v)) {
        root.setProperty('--tg-theme-' + k.replace(/_/g, '-'), v);
      }
    });
    var bg = WebApp.themeParams.bg_color;
    WebApp.colorScheme = bg ? (luminance(bg) < 0.5 ? 'dark' : 'light')
      : (window.matchMedia && matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light');
    root.setProperty('--tg-color-scheme', WebApp.colorScheme);
  }

  var WebApp = {
    initData: initData,
    initDataUnsafe: unsafe,
    version: params.tgWebAppVersion || '6.0',
    platform: params.tgWebAppPlatform || 'unknown',
    themeParams: {},
    colorScheme: 'light',
    isExpanded: false,
    ready: function () { postEvent('web_app_ready'); },
    expand: function () { WebApp.isExpanded = true; postEvent('web_app_expand'); },
    close: function () { postEvent('web_app_close'); },
    setHeaderColor: function (c) { postEvent('web_app_set_header_color', /^#/.test(c) ? { color: c } : { color_key: c }); },
    setBackgroundColor: function (c) { postEvent('web_app_set_background_color', { color: c }); },
    onEvent: function (n, h) { (webAppHandlers[n] = webAppHandlers[n] || []).push(h); },
    offEvent: function (n, h) { webAppHandlers[n] = (webAppHandlers[n] || []).filter(function (x) { return x !== h; }); },
    HapticFeedback: {
      impactOccurred: function (style) { postEvent('web_app_trigger_haptic_feedback', { type: 'impact', impact_style: style }); return this; },
      notificationOccurred: function (type) { postEvent('web_app_trigger_haptic_feedback', { type: 'notification', notification_type: type }); return this; },
      selectionChanged: function () { postEvent('web_app_trigger_haptic_feedback', { type: 'selection_change' }); return this; }
    }
  };
  applyTheme(parseJSON(params.tgWebAppThemeParams || '{}', {}));
  window.Telegram.WebView.onEvent('theme_changed', function (t, data) {
    applyTheme(data && data.theme_params ? data.theme_params : {});
    emit('themeChanged');
  });
  window.Telegram.WebApp = WebApp;
  postEvent('web_app_request_theme');
})();
