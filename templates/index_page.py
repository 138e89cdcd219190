"""Fetches package indexes' torch pages for torchfix's index check.

usage: index_page.py TIMEOUT_S URL...

Each URL is a project page (".../whl/cu128/torch/"), asked once for the
simple API's JSON form (PEP 691) with HTML (PEP 503) accepted; proxies come
from the environment, as pip's do, and credentials in the URL are sent as
basic auth. Prints one JSON object a line per URL: {"url", "status" (HTTP
status, 0 when there was no answer), "content_type", "body", "error"}.
torchfix parses the body (core/resolver/wheel_index.cpp). Never fails on a bad page
or network.
"""
import base64, json, socket, sys, urllib.error, urllib.parse, urllib.request

ACCEPT = ("application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html;q=0.2, "
          "text/html;q=0.1")
LIMIT = 16 << 20  # bytes read of one page


def request(url):
    parts = urllib.parse.urlsplit(url)
    headers = {"Accept": ACCEPT, "User-Agent": "torchfix"}
    if parts.username is not None:
        host = parts.hostname + (":%d" % parts.port if parts.port else "")
        url = urllib.parse.urlunsplit(parts._replace(netloc=host))
        user = urllib.parse.unquote(parts.username) + ":" + urllib.parse.unquote(parts.password or "")
        headers["Authorization"] = "Basic " + base64.b64encode(user.encode()).decode()
    return urllib.request.Request(url, headers=headers)


def ask(url, timeout):
    out = {"url": url, "status": 0, "content_type": "", "body": "", "error": ""}
    try:
        with urllib.request.urlopen(request(url), timeout=timeout) as reply:
            out["content_type"] = reply.headers.get("Content-Type", "")
            body = reply.read(LIMIT + 1)
            if len(body) > LIMIT:  # a cut page would say a wheel is missing that is not
                out["error"] = "page larger than %d MiB" % (LIMIT >> 20)
                return out
            out["body"] = body.decode("utf-8", "replace")
            out["status"] = reply.status
    except urllib.error.HTTPError as e:
        out["status"] = e.code
        out["error"] = "HTTP %d" % e.code
    except (socket.timeout, TimeoutError):
        out["error"] = "timed out after %g s" % timeout
    except urllib.error.URLError as e:
        reason = e.reason
        out["error"] = ("timed out after %g s" % timeout) if isinstance(reason, socket.timeout) else str(reason)
    except (ValueError, OSError) as e:
        out["error"] = "unreadable page: %s" % e
    except Exception as e:  # http.client.HTTPException (BadStatusLine, IncompleteRead, ...): one page, not the script
        out["error"] = "unreadable reply: %s" % type(e).__name__
    return out


def main():
    timeout = float(sys.argv[1])
    for url in sys.argv[2:]:
        print(json.dumps(ask(url, timeout)), flush=True)


if __name__ == "__main__":
    main()
