// Vite configuration TauGrid builds Kueue's KueueViz frontend with (hack/setup/25-kueueviz.sh).
// Upstream's own config serves the app at the site root; the Portal serves it under
// KUEUEVIZ_BASE (for example /kueueviz/), so assets are built for that base and the app's
// BrowserRouter is given the same basename. The upstream sources are not edited: the one
// import of react-router-dom's BrowserRouter resolves to router.js, everything else to the
// real package.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

const here = path.dirname(fileURLToPath(import.meta.url));
const shim = path.join(here, 'router.js');
const base = process.env.KUEUEVIZ_BASE;
if (!base || !base.startsWith('/') || !base.endsWith('/')) {
  throw new Error('KUEUEVIZ_BASE must be a path that starts and ends with "/"');
}

const basenameRouter = {
  name: 'taugrid-router-basename',
  enforce: 'pre',
  resolveId(source, importer) {
    if (source === 'react-router-dom' && importer && importer !== shim) {
      return shim;
    }
    return null;
  },
};

export default defineConfig({
  root: path.resolve(here, '..'),
  base,
  plugins: [basenameRouter, react()],
  publicDir: 'public',
  envPrefix: ['VITE_', 'REACT_APP_'],
  resolve: { extensions: ['.js', '.jsx', '.json'] },
  build: { sourcemap: false, emptyOutDir: true },
});
