// Mounts GraphiQL on /graphql: queries over POST, subscriptions over the websocket on the same
// path (graphql-transport-ws). Served as a file so the page needs no inline script.
(function () {
  const http = new URL('/graphql', window.location.href);
  const ws = new URL('/graphql', window.location.href);
  ws.protocol = window.location.protocol === 'https:' ? 'wss:' : 'ws:';
  const fetcher = GraphiQL.createFetcher({ url: http.href, subscriptionUrl: ws.href });
  const root = ReactDOM.createRoot(document.getElementById('graphiql'));
  root.render(React.createElement(GraphiQL, { fetcher: fetcher, defaultEditorToolsVisibility: true }));
})();
