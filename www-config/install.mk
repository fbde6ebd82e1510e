# www-config/install.mk -- make install: the programs, man page, schema and an
# example configuration, under $(DESTDIR)$(PREFIX).
#
#   make install                           into /usr/local
#   make install PREFIX=/usr DESTDIR=/tmp/pkg   staged, for packaging
#   make install-static                    the same with the static build
#   make uninstall
#
#   $(PREFIX)/bin/idemhook                        the operator's command
#   $(PREFIX)/libexec/idemhook/<provider>.fcgi    the receivers
#   $(PREFIX)/share/man/man1/idemhook.1           the full command reference
#                                                 (man idemhook)
#   $(PREFIX)/share/idemhook/schema.sql           for reference (SQLite; and
#   $(PREFIX)/share/idemhook/schema-postgres.sql  PostgreSQL): the programs
#                                                 carry them and migrate on open
#   $(PREFIX)/share/idemhook/idemhook.env.example settings (copy to
#                                                 /etc/idemhook/idemhook.env)
#   $(PREFIX)/share/idemhook/www-config/          the Apache, lighttpd and
#                                                 nginx configurations
#
# Nothing is written outside $(DESTDIR)$(PREFIX): create the database
# directory and the settings file yourself (README.md, Deployment).

INSTALL      ?= install
BINDIR_I      = $(DESTDIR)$(PREFIX)/bin
LIBEXECDIR_I  = $(DESTDIR)$(PREFIX)/libexec/idemhook
MAN1DIR_I     = $(DESTDIR)$(PREFIX)/share/man/man1
SHAREDIR_I    = $(DESTDIR)$(PREFIX)/share/idemhook
# Which programs to install: the normal build, or the static one.
INSTALL_FROM ?= $(BUILD)

.PHONY: install install-static uninstall install-files

install: all
	$(MAKE) --no-print-directory install-files INSTALL_FROM=$(BUILD)

install-static: static
	$(MAKE) --no-print-directory install-files INSTALL_FROM=$(STATIC_DIR)

install-files:
	$(INSTALL) -d -m 0755 $(BINDIR_I) $(LIBEXECDIR_I) $(SHAREDIR_I) \
	    $(SHAREDIR_I)/www-config/apache $(SHAREDIR_I)/www-config/lighttpd \
	    $(SHAREDIR_I)/www-config/nginx
	$(INSTALL) -m 0755 $(INSTALL_FROM)/idemhook $(BINDIR_I)/idemhook
	$(INSTALL) -m 0755 $(PROVIDERS:%=$(INSTALL_FROM)/%.fcgi) \
	    $(INSTALL_FROM)/console.fcgi $(LIBEXECDIR_I)/
	$(INSTALL) -m 0644 db/sqlite/schema.sql $(SHAREDIR_I)/schema.sql
	$(INSTALL) -m 0644 db/postgres/schema.sql \
	    $(SHAREDIR_I)/schema-postgres.sql
	$(INSTALL) -m 0644 www-config/idemhook.env.example \
	    $(SHAREDIR_I)/idemhook.env.example
	$(INSTALL) -m 0644 www-config/apache/*.htaccess \
	    www-config/apache/*.conf $(SHAREDIR_I)/www-config/apache/
	$(INSTALL) -m 0644 www-config/lighttpd/*.conf \
	    www-config/lighttpd/*.example www-config/lighttpd/*.tmpfiles $(SHAREDIR_I)/www-config/lighttpd/
	$(INSTALL) -m 0644 www-config/nginx/*.conf www-config/nginx/*.service \
	    $(SHAREDIR_I)/www-config/nginx/
	$(INSTALL) -m 0755 www-config/nginx/*.sh $(SHAREDIR_I)/www-config/nginx/
	$(INSTALL) -d -m 0755 $(MAN1DIR_I)
	$(INSTALL) -m 0644 handlers/cli/idemhook.1 $(MAN1DIR_I)/idemhook.1

uninstall:
	rm -f $(BINDIR_I)/idemhook $(PROVIDERS:%=$(LIBEXECDIR_I)/%.fcgi) \
	    $(LIBEXECDIR_I)/console.fcgi \
	    $(MAN1DIR_I)/idemhook.1
	rm -rf $(SHAREDIR_I)
	-rmdir $(LIBEXECDIR_I)
