// KueueViz reads its backend from window.env (src/env.js). The Portal serves the backend
// contract under the same path as the app, on the same host and scheme the browser used,
// so the URL is derived here rather than configured per install.
window.env = {
  REACT_APP_WEBSOCKET_URL:
    (window.location.protocol === 'https:' ? 'wss://' : 'ws://') +
    window.location.host +
    '__KUEUEVIZ_BASE__'.replace(/\/$/, ''),
};
