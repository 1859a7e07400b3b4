"""asyncio glue only: the server and its registry of connections, one client
connection (bytes to events to session calls), start-up (TLS, SCRAM) and portals."""
