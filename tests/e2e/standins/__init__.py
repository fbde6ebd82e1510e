"""Stand-ins for the providers' APIs (idemhook catch-up and health tests).

Each module serves the documented request and response shapes of one
provider's API on 127.0.0.1, from fixtures in the provider's documented
format, with the failures a client must survive (429 with Retry-After,
500, 401 for a wrong key).  No test reaches the internet.
"""
