"""The canned queries: their SQL (shipped in the package), the rules for their parameters,
the SQL functions they call, and running them by name outside Datasette.

- ``sql/<name>.sql``: each query's SQL; ``sql/_<fragment>.sql``: SQL that several include;
- ``declarations``: each query declared once (title, description, parameters and rules);
- ``rules``: the parameter rules and the checks across parameters;
- ``catalog``: the queries in Datasette's form, from their SQL files and declarations;
- ``validation``: the checks every surface runs before any SQL;
- ``sqlfunctions``: the SQL functions the queries call;
- ``runner``: an archive queried by canned-query name.
"""
