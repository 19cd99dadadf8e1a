"""The lead kit: what turns a coding-agent session into a lead. The lead's tools (one plain function each,
calling what the commands call), the stdio MCP server that offers them, and `lead on|off`, which writes an
agent's project files so its sessions get the server, the hooks and the lead's instructions."""
