"""A small retrieval service for the tests of external retrievers: the tiny corpus's paragraphs ranked by
shared words, served over HTTP by uvicorn (started by the tests on loopback, stopped by PID).

    POST /search     {"query", "k"} -> {"hits": [{"text", "doc_id", "score"}]}; needs "Bearer $SERVICE_TOKEN"
    POST /slow       the same, three seconds late
    POST /flaky      503 the first time a query is asked, then the answer
    POST /malformed  a body that is not JSON
    GET  /version    {"version": $SERVICE_INDEX_VERSION}

and a hostile one: /redirect-away (302 to the same server under another origin, localhost, whose /capture
keeps the headers it got: GET /captured), /redirect-get (302 to /search: a POST that would become a GET),
/redirect-keep (307 to /search), /flood (100 MB), /trickle (a byte every half second), and
/version-protected (the version, behind the token).
"""

from __future__ import annotations

import asyncio
import os
import re
from pathlib import Path

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response, StreamingResponse
from starlette.routing import Route

CORPUS = Path(os.environ.get("SERVICE_CORPUS", Path(__file__).parent / "fixtures" / "tiny_corpus"))


def passages() -> list[dict]:
    from rag_assets.lib.ingest.extraction import extract_document

    found = []
    for path in sorted(p for p in CORPUS.rglob("*") if p.suffix in (".html", ".txt")):
        text = extract_document(path.read_bytes(), "html" if path.suffix == ".html" else "text", path.stem).text
        for paragraph in text.split("\n\n"):
            found.append({"text": paragraph, "doc_id": path.relative_to(CORPUS).as_posix()})
    return found


PASSAGES = passages()
ASKED: set[str] = set()


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", text.lower()))


def rank(query: str, k: int) -> list[dict]:
    words = _words(query)
    scored = sorted(((len(words & _words(p["text"])), i) for i, p in enumerate(PASSAGES)), key=lambda s: (-s[0], s[1]))
    return [PASSAGES[i] | {"score": float(score)} for score, i in scored[:k]]


async def search(request: Request) -> Response:
    if request.headers.get("authorization") != f"Bearer {os.environ.get('SERVICE_TOKEN', '')}":
        return JSONResponse({"error": "unauthorized"}, status_code=401)
    body = await request.json()
    return JSONResponse({"hits": rank(body["query"], int(body["k"]))})


async def slow(request: Request) -> Response:
    await asyncio.sleep(3.0)
    return await search(request)


async def flaky(request: Request) -> Response:
    body = await request.json()
    if body["query"] not in ASKED:
        ASKED.add(body["query"])
        return JSONResponse({"error": "busy"}, status_code=503)
    return JSONResponse({"hits": rank(body["query"], int(body["k"]))})


async def malformed(request: Request) -> Response:
    return Response("{not json", media_type="application/json")


async def version(request: Request) -> Response:
    return JSONResponse({"version": os.environ.get("SERVICE_INDEX_VERSION", "v1")})


async def version_protected(request: Request) -> Response:
    if request.headers.get("authorization") != f"Bearer {os.environ.get('SERVICE_TOKEN', '')}":
        return JSONResponse({"error": "unauthorized"}, status_code=401)
    return await version(request)


CAPTURED: list[dict] = []


async def redirect_away(request: Request) -> Response:
    return RedirectResponse(f"http://localhost:{request.url.port}/capture", status_code=302)


async def capture(request: Request) -> Response:
    CAPTURED.append({"method": request.method, "authorization": request.headers.get("authorization")})
    return JSONResponse({"hits": [{"text": "an answer that ignores the question"}]})


async def captured(request: Request) -> Response:
    return JSONResponse({"requests": CAPTURED})


async def redirect_get(request: Request) -> Response:
    return RedirectResponse("/search", status_code=302)


async def redirect_keep(request: Request) -> Response:
    return RedirectResponse("/search", status_code=307)


async def flood(request: Request) -> Response:
    async def megabytes():
        yield b'{"hits": [{"text": "'
        for _ in range(100):
            yield b"x" * (1024 * 1024)
        yield b'"}]}'
    return StreamingResponse(megabytes(), media_type="application/json")


async def trickle(request: Request) -> Response:
    async def bytes_slowly():
        for character in b'{"hits": []}' + b" " * 200:
            yield bytes([character])
            await asyncio.sleep(0.5)
    return StreamingResponse(bytes_slowly(), media_type="application/json")


app = Starlette(routes=[Route("/search", search, methods=["POST"]), Route("/slow", slow, methods=["POST"]),
                        Route("/flaky", flaky, methods=["POST"]), Route("/malformed", malformed, methods=["POST"]),
                        Route("/version", version), Route("/version-protected", version_protected),
                        Route("/redirect-away", redirect_away, methods=["POST"]),
                        Route("/capture", capture, methods=["GET", "POST"]), Route("/captured", captured),
                        Route("/redirect-get", redirect_get, methods=["POST"]),
                        Route("/redirect-keep", redirect_keep, methods=["POST"]),
                        Route("/flood", flood, methods=["POST"]), Route("/trickle", trickle, methods=["POST"])])
