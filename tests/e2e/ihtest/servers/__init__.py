"""One launcher per web server: lighttpd.Server (the base, with the HTTP
client and the store readers), apache.ApacheServer, nginx.NginxServer."""
