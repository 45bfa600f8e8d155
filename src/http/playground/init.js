// Mounts GraphiQL on the path it is served at: on /graphql, queries over POST and
// subscriptions over the websocket on the same path (graphql-transport-ws); on /subgraph, the
// subgraph API's queries over POST. Served as a file so the page needs no inline script.
(function () {
  const subgraph = window.location.pathname.replace(/\/+$/, '') === '/subgraph';
  const path = subgraph ? '/subgraph' : '/graphql';
  const http = new URL(path, window.location.href);
  const ws = new URL(path, window.location.href);
  ws.protocol = window.location.protocol === 'https:' ? 'wss:' : 'ws:';
  const fetcher = subgraph
    ? GraphiQL.createFetcher({ url: http.href })
    : GraphiQL.createFetcher({ url: http.href, subscriptionUrl: ws.href });
  const root = ReactDOM.createRoot(document.getElementById('graphiql'));
  root.render(React.createElement(GraphiQL, { fetcher: fetcher, defaultEditorToolsVisibility: true }));
})();
