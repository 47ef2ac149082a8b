// react-router-dom as KueueViz imports it, with BrowserRouter rooted at the base the bundle
// was built for (vite.config.mjs), so its routes (/workloads, /cluster-queue/:name, ...)
// live under the Portal path that serves it.
import { createElement } from 'react';
import { BrowserRouter as UpstreamBrowserRouter } from 'react-router-dom';

export * from 'react-router-dom';

const basename = import.meta.env.BASE_URL.replace(/\/$/, '');

export function BrowserRouter(props) {
  return createElement(UpstreamBrowserRouter, { basename, ...props });
}
