"""The origin servers as data: which site is served where and how (the server plan), nginx's and Caddy's configuration text, their access logs read back."""
