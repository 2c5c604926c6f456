"""pagebench: how protocol choices change what a person waits for."""
