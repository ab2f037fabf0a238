"""The skill source: an Agent Skill folder becomes a command tree (`folder`), with which of its files may be read
(`files`) and served as MCP resources (`resources`)."""
