#!/usr/bin/env python3
"""Kubernetes CRD schemas from the wild, with their `x-kubernetes-validations`, through structure
(issue 40: "20 Kubernetes CRD schemas with `x-kubernetes-validations` from the wild load, and their
rules run").

For every CustomResourceDefinition found in the sources (each version's `openAPIV3Schema` that
holds `x-kubernetes-validations` anywhere):

1. **load**: the schema goes through structure's registration check (`PUT /v1/schemas/{name}?check`
   on `structure serve`, nothing written): a rule that does not parse, names `oldSelf`, has a bad
   `fieldPath` or costs too much is refused there, at its pointer;
2. **functions**: every function a rule calls is probed once (a rule `f(self)` and `self.f()` run
   on a value): those structure's CEL does not declare (Kubernetes' own libraries: `isURL`,
   `quantity`, `format.*`, the extended strings library ...) are listed, since there is no type
   checker at registration (a rule calling one loads and fails when it runs);
3. **run**: every manifest in the sources whose apiVersion/kind is the CRD's version (the
   project's examples; those under a path holding `invalid` are expected to be refused) is
   answered, as is, by a fake OpenAI-compatible model (`{"answer": <instance>}`, the way
   bench/src/bin/structure-verdicts.rs delivers an instance) to `POST /v1/structure` with
   `maxLoops` 1: `ok` with the instance itself, or the violations (rule messages, rules that could
   not be checked, other schema violations). An instance that is not `ok` as it is runs again
   with the schema's `default`s applied first, as the API server does before it runs the rules.

Reads the sources where they are (a folder, or a bare git directory at HEAD, e.g. what the `fetch`
tool brings to /work/.mirror); copies nothing into the repository. Uses the built CLI only
(`target/debug/structure` by default; no cargo): `structure serve --store memory`, which it
starts on a free port and stops at the end. Needs `pip install pyyaml`.

    python3 bench/crd-rules.py \
        /work/.mirror/kubernetes-sigs+gateway-api/repo::config/crd/standard,config/crd/experimental,examples,hack/invalid-examples \
        /work/.mirror/cert-manager+cert-manager/repo::deploy/crds,docs \
        /work/.mirror/kubernetes-sigs+cluster-api/repo::core/config/crd/bases,bootstrap/kubeadm/config/crd/bases,controlplane/kubeadm/config/crd/bases,docs/book/src \
        /work/.mirror/kyverno+kyverno/repo::config/crds/policies.kyverno.io \
        /work/.mirror/crossplane+crossplane/repo::cluster/crds \
        [--bin target/debug/structure] [--json OUT.json] [--show 5]

A source is `PATH` or `PATH::PREFIX,PREFIX,...` (only files under those prefixes are read).
Prints a markdown summary (for BENCHMARKS.md), the table per CRD schema, and what failed,
grouped by why.
"""

import argparse
import copy
import hashlib
import json
import os
import pathlib
import re
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections import Counter, defaultdict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import yaml

try:
    LOADER = yaml.CSafeLoader
except AttributeError:  # pyyaml without libyaml
    LOADER = yaml.SafeLoader

RULES_KEY = "x-kubernetes-validations"
# CEL macros: parsed, never looked up as functions.
MACROS = {"has", "all", "exists", "exists_one", "map", "filter"}
# Literal words a call pattern could match that are not functions.
NOT_FUNCTIONS = {"in"}


# ---------------------------------------------------------------------------------------------
# Reading the sources


def source_files(spec):
    """(label, [(path, text)]) for one source: a folder or a bare git directory, at HEAD."""
    root, _, prefixes = spec.partition("::")
    prefixes = [p.strip().strip("/") for p in prefixes.split(",") if p.strip()]
    root_path = pathlib.Path(root)
    label = root_path.name if root_path.name != "repo" else root_path.parent.name
    wanted = lambda path: path.endswith((".yaml", ".yml")) and (
        not prefixes or any(path == p or path.startswith(p + "/") for p in prefixes)
    )
    files = []
    if (root_path / "HEAD").exists() and (root_path / "objects").exists():
        listing = subprocess.run(
            ["git", "--git-dir", root, "ls-tree", "-r", "HEAD", "--", *prefixes],
            capture_output=True, text=True, check=True,
        ).stdout
        entries = []
        for line in listing.splitlines():
            meta, _, path = line.partition("\t")
            kind, obj = meta.split()[1:3]
            if kind == "blob" and wanted(path):
                entries.append((path, obj))
        # One cat-file process for all blobs.
        proc = subprocess.Popen(
            ["git", "--git-dir", root, "cat-file", "--batch"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        )
        proc.stdin.write("".join(obj + "\n" for _, obj in entries).encode())
        proc.stdin.close()
        for path, _ in entries:
            header = proc.stdout.readline().split()
            if len(header) < 3:  # "<object> missing": a large file the snapshot left out
                continue
            size = int(header[2])
            data = proc.stdout.read(size)
            proc.stdout.read(1)
            files.append((path, data.decode("utf-8", "replace")))
        proc.wait()
        head = subprocess.run(
            ["git", "--git-dir", root, "rev-parse", "--short", "HEAD"],
            capture_output=True, text=True,
        ).stdout.strip()
        label = f"{label}@{head}"
    else:
        for dirpath, _, names in os.walk(root):
            for name in sorted(names):
                full = os.path.join(dirpath, name)
                rel = os.path.relpath(full, root)
                if wanted(rel):
                    files.append((rel, pathlib.Path(full).read_text("utf-8", "replace")))
    return label, sorted(files)


def documents(text):
    """The YAML documents of a file; a file that does not parse (a Helm template) gives none."""
    try:
        return [d for d in yaml.load_all(text, Loader=LOADER) if isinstance(d, dict)]
    except yaml.YAMLError:
        return None


def walk_rules(schema, pointer=""):
    """(pointer, rule) for every rule in the schema, the pointer to its `rule`."""
    if isinstance(schema, dict):
        for key, value in schema.items():
            here = f"{pointer}/{escape(key)}"
            if key == RULES_KEY and isinstance(value, list):
                for i, rule in enumerate(value):
                    yield f"{here}/{i}", rule
            else:
                yield from walk_rules(value, here)
    elif isinstance(schema, list):
        for i, item in enumerate(schema):
            yield from walk_rules(item, f"{pointer}/{i}")


def escape(key):
    return str(key).replace("~", "~0").replace("/", "~1")


class Crd:
    """One version's schema of one CRD."""

    def __init__(self, source, path, group, kind, version, schema):
        self.source, self.path = source, path
        self.group, self.kind, self.version = group, kind, version
        self.schema = schema
        self.rules = list(walk_rules(schema))
        self.digest = hashlib.sha256(json.dumps(schema, sort_keys=True).encode()).hexdigest()[:12]
        self.problems = None  # from the check: [] loads
        self.check_error = None
        self.without_combinators = None  # problems left with oneOf/anyOf/allOf/not dropped
        self.runs = []  # Run
        self.missing = set()  # functions its rules call that structure lacks

    @property
    def api_version(self):
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def name(self):
        short = self.path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
        channel = "experimental/" if "experimental" in self.path else ""
        return f"{channel}{short}@{self.version}"


def crds_in(source, path, doc):
    if doc.get("kind") != "CustomResourceDefinition":
        return []
    spec = doc.get("spec") or {}
    group, kind = spec.get("group", ""), (spec.get("names") or {}).get("kind", "?")
    found = []
    for version in spec.get("versions") or []:
        schema = ((version.get("schema") or {}).get("openAPIV3Schema")
                  or (spec.get("validation") or {}).get("openAPIV3Schema"))
        if isinstance(schema, dict):
            found.append(Crd(source, path, group, kind, version.get("name", "?"), schema))
    if not spec.get("versions") and (spec.get("validation") or {}).get("openAPIV3Schema"):
        found.append(Crd(source, path, group, kind, spec.get("version", "?"),
                         spec["validation"]["openAPIV3Schema"]))
    return found


# ---------------------------------------------------------------------------------------------
# Defaults, as the API server applies them before it validates


def with_defaults(schema, value):
    if not isinstance(schema, dict):
        return value
    if isinstance(value, dict):
        value = dict(value)
        props = schema.get("properties") or {}
        for key, sub in props.items():
            if key not in value and isinstance(sub, dict) and "default" in sub:
                value[key] = copy.deepcopy(sub["default"])
        extra = schema.get("additionalProperties")
        for key in list(value):
            sub = props.get(key, extra if isinstance(extra, dict) else None)
            if sub is not None:
                value[key] = with_defaults(sub, value[key])
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        value = [with_defaults(schema["items"], item) for item in value]
    return value


def without_combinators(schema):
    """The schema with oneOf/anyOf/allOf/not dropped: in a structural CRD schema they are value
    validations only (they cannot add a type, a property or a bound), so a cost estimate that
    reads bounds through them is what this what-if measures."""
    if isinstance(schema, dict):
        return {k: without_combinators(v) for k, v in schema.items()
                if k not in ("oneOf", "anyOf", "allOf", "not")}
    if isinstance(schema, list):
        return [without_combinators(v) for v in schema]
    return schema


# ---------------------------------------------------------------------------------------------
# The fake model and structure serve


class Model:
    """An OpenAI-compatible model that answers `{"answer": <the current instance>}`."""

    def __init__(self):
        model = self
        self.instance = None
        self.lock = threading.Lock()

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                self.send_response(404)
                self.end_headers()
                self.wfile.write(b"{}")

            def do_POST(self):
                self.rfile.read(int(self.headers.get("content-length") or 0))
                content = json.dumps({"answer": model.instance})
                body = json.dumps({
                    "choices": [{"message": {"role": "assistant", "content": content},
                                 "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": 100, "completion_tokens": 20},
                }).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Structure:
    def __init__(self, binary, model, settings=()):
        self.model = model
        self.port = free_port()
        self.log = open(os.devnull, "w")
        self.proc = subprocess.Popen(
            [binary, "serve", "--listen", f"127.0.0.1:{self.port}", "--store", "memory",
             "--model", "openai/exact-model", "--base-url", model.base_url,
             "--set", "structure_api_auth=none", "--set", "openai_api_key=unused",
             "--set", "structure_delivery=prompt",
             "--set", "structure_require_provider_strict_output=false",
             *[arg for setting in settings for arg in ("--set", setting)]],
            stdout=self.log, stderr=self.log,
        )
        for _ in range(900):  # a debug build compiles the component on its first start
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{self.port}/healthz", timeout=2)
                return
            except OSError:
                if self.proc.poll() is not None:
                    sys.exit(f"structure serve exited with {self.proc.returncode}")
                time.sleep(0.2)
        sys.exit("structure serve did not answer /healthz")

    def request(self, method, path, body):
        req = urllib.request.Request(
            f"http://127.0.0.1:{self.port}{path}", data=json.dumps(body).encode(),
            method=method, headers={"content-type": "application/json"},
        )
        try:
            with urllib.request.urlopen(req, timeout=300) as resp:
                return resp.status, json.loads(resp.read())
        except urllib.error.HTTPError as e:
            raw = e.read()
            try:
                return e.code, json.loads(raw)
            except ValueError:
                return e.code, {"raw": raw.decode("utf-8", "replace")}

    def check(self, schema):
        return self.request("PUT", "/v1/schemas/crd-rules-check?check", {"schema": schema})

    def run(self, schema, instance):
        with self.model.lock:
            self.model.instance = instance
            return self.request("POST", "/v1/structure", {
                "prompt": json.dumps(instance, indent=1), "schema": schema, "maxLoops": 1,
            })

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()


# ---------------------------------------------------------------------------------------------
# Functions the rules call


def strip_strings(rule):
    return re.sub(r"'(?:\\.|[^'\\])*'|\"(?:\\.|[^\"\\])*\"", "''", rule)


def functions_of(rule):
    """The functions a rule calls: `name(` after a dot is a member call (its last name), else a
    global one (with its namespace: `format.named`)."""
    names = set()
    text = strip_strings(rule)
    for m in re.finditer(r"(\.?)([A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)*)\s*\(", text):
        dotted, name = m.group(1), m.group(2)
        if dotted or "." in name:
            parts = name.split(".")
            # `self.a.b.f(` is a member call f; `format.dns1123Label(` a namespaced global.
            if not dotted and parts[0] in {"format", "quantity", "url", "ip", "cidr",
                                           "semver", "strings", "math", "sets", "lists",
                                           "optional", "base64"}:
                names.add(name)
                continue
            name = parts[-1]
        if name not in MACROS and name not in NOT_FUNCTIONS:
            names.add(name)
    return names


def probe_functions(structure, names):
    """Which names structure's CEL does not declare, each probed alone as `f(self.s) == 1` and
    `self.s.f() == 1` on a string: missing when the check refuses it as an undeclared reference
    (a namespaced name such as `format.dns1123Label` is read as a variable), or when both forms
    run into 'Undeclared reference'. Returns {name: 'registration' | 'runtime'}."""
    missing = {}
    for name in sorted(names):
        member = name.rsplit(".", 1)[-1]
        rules = [{"rule": f"{name}(self.s) == 1"}, {"rule": f"self.s.{member}() == 1"}]
        schema = {"type": "object", "properties": {"s": {"type": "string", "maxLength": 10}},
                  "required": ["s"], RULES_KEY: rules}
        status, body = structure.check(schema)
        problems = body.get("problems") or [] if status == 200 else []
        if any("undeclared reference" in p.get("message", "").lower() for p in problems):
            missing[name] = "registration"
            continue
        status, result = structure.run(schema, {"s": "a"})
        errors = (result.get("errors") or []) if status == 200 else []
        undeclared = [e for e in errors if f"Undeclared reference to '{member}'" in e
                      or f"Undeclared reference to '{name}'" in e]
        if len(undeclared) >= 2:
            missing[name] = "runtime"
    return missing


def probe_escaping(structure):
    """Whether structure unescapes Kubernetes' property names: a rule
    `!has(self.__namespace__)` on {"namespace": "x"} must be violated."""
    schema = {"type": "object", "properties": {"namespace": {"type": "string", "maxLength": 10}},
              RULES_KEY: [{"rule": "!has(self.__namespace__)", "message": "escaped"}]}
    status, result = structure.run(schema, {"namespace": "x"})
    if status != 200:
        return f"unknown (HTTP {status}: {json.dumps(result)[:120]})"
    said = (result.get("errors") or []) + ((result.get("trace") or {}).get("leftOut") or [])
    if any("escaped" in e for e in said):
        return "yes"
    if result.get("status") == "ok":
        return "no (the rule never sees the property: `has()` is false, the rule passes)"
    return (
        "no: " + "; ".join(result.get("errors") or [])[:160])


# ---------------------------------------------------------------------------------------------
# Judging a run


class Run:
    def __init__(self, path, expect_invalid, status, result, defaulted=None):
        self.path, self.expect_invalid = path, expect_invalid
        self.status, self.result = status, result
        self.defaulted = defaulted  # the run with defaults applied, when this one is not ok

    @property
    def left_out(self):
        return ((self.result or {}).get("trace") or {}).get("leftOut") or []

    @property
    def verdict(self):
        """`ok` only with the instance itself; `ok-left-out` when structure dropped optional
        values that break the schema or a rule (trace.leftOut): the instance as is was refused."""
        if self.status != 200:
            return "error"
        status = self.result.get("status", "?")
        if status == "ok" and self.left_out:
            return "ok-left-out"
        return status

    @property
    def errors(self):
        """The errors, or for `ok-left-out` what was left out and why."""
        if self.verdict == "ok-left-out":
            return [re.sub(r"^left out ", "", e) for e in self.left_out]
        return (self.result or {}).get("errors") or []


def classify(errors, crd):
    """Each error as ('rule', msg) a rule's message, ('rule-error', msg) a rule that could not
    be checked, or ('schema', msg) anything else."""
    messages = set()
    for _, rule in crd.rules:
        if isinstance(rule, dict):
            for key in ("message", "rule"):
                if isinstance(rule.get(key), str):
                    messages.add(rule[key].strip())
    out = []
    for error in errors:
        pointer, _, text = error.partition(": ")
        if "could not be checked" in text and text.startswith("the rule "):
            out.append(("rule-error", error))
        elif text.strip() in messages or any(text.strip().startswith(m) for m in messages if len(m) > 20):
            out.append(("rule", error))
        else:
            out.append(("schema", error))
    return out


# ---------------------------------------------------------------------------------------------


def group_reason(message):
    """A short reason for grouping a refusal or a rule error."""
    m = re.search(r"ndeclared reference to ['\"]([^'\"]+)['\"]", message)
    if m:
        return f"undeclared function/identifier `{m.group(1)}`"
    if "oldSelf" in message:
        return "`oldSelf` transition rule (refused on purpose)"
    if "does not parse" in message:
        return "CEL parse error"
    if "cost" in message:
        return "estimated cost over the ceiling"
    m = re.search(r"could not be checked: (.*)$", message)
    if m:
        text = re.sub(r"'[^']*'", "'…'", m.group(1))
        text = re.sub(r"\d+", "N", text)
        return f"runtime: {text[:90]}"
    return re.sub(r"\d+", "N", message)[:100]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sources", nargs="+", help="PATH or PATH::PREFIX,PREFIX (folder or bare git dir)")
    parser.add_argument("--bin", default=str(pathlib.Path(__file__).resolve().parent.parent
                                             / "target/debug/structure"))
    parser.add_argument("--json", help="write every figure and verdict here")
    parser.add_argument("--show", type=int, default=5, help="examples shown per failure group")
    parser.add_argument("--max-instances", type=int, default=500, help="instances run per schema")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="a host setting for structure serve (e.g. structure_max_schema_depth=64)")
    args = parser.parse_args()

    binary = pathlib.Path(args.bin)
    if not binary.exists():
        sys.exit(f"{binary} is missing: build it (cargo build --bin structure) first")
    built = time.strftime("%Y-%m-%d %H:%M", time.localtime(binary.stat().st_mtime))

    crds, instances, unparsed = [], [], Counter()
    labels = []
    for spec in args.sources:
        label, files = source_files(spec)
        labels.append(label)
        for path, text in files:
            if "apiVersion" not in text:
                continue
            docs = documents(text)
            if docs is None:
                unparsed[label] += 1
                continue
            for doc in docs:
                if doc.get("kind") == "CustomResourceDefinition":
                    crds += crds_in(label, path, doc)
                elif isinstance(doc.get("apiVersion"), str) and isinstance(doc.get("kind"), str):
                    instances.append((label, path, doc))

    with_rules = [c for c in crds if c.rules]
    by_gvk = defaultdict(list)
    for crd in with_rules:
        by_gvk[(crd.api_version, crd.kind)].append(crd)
    matched = defaultdict(list)
    for label, path, doc in instances:
        for crd in by_gvk.get((doc["apiVersion"], doc["kind"]), []):
            if crd.source == label:
                matched[id(crd)].append((path, doc))

    print(f"structure: {binary} (built {built})", file=sys.stderr)
    print(f"{len(crds)} CRD version schemas, {len(with_rules)} with rules; "
          f"{sum(len(v) for v in matched.values())} instance runs planned", file=sys.stderr)

    model = Model()
    structure = Structure(str(binary), model, args.set)
    started = time.time()
    try:
        # The functions the rules call, probed once.
        called = set()
        for crd in with_rules:
            for _, rule in crd.rules:
                if isinstance(rule, dict) and isinstance(rule.get("rule"), str):
                    called |= functions_of(rule["rule"])
        missing = probe_functions(structure, called)
        escaping = probe_escaping(structure)

        checked = {}
        for n, crd in enumerate(with_rules, 1):
            for _, rule in crd.rules:
                if isinstance(rule, dict) and isinstance(rule.get("rule"), str):
                    crd.missing |= functions_of(rule["rule"]) & missing.keys()
            if crd.digest not in checked:
                checked[crd.digest] = structure.check(crd.schema)
            status, body = checked[crd.digest]
            if status == 200:
                crd.problems = body.get("problems") or []
            else:
                crd.check_error = f"HTTP {status}: {json.dumps(body)[:300]}"
                crd.problems = [{"pointer": "", "message": crd.check_error}]
            if any("estimated cost" in p.get("message", "") for p in crd.problems):
                key = "stripped:" + crd.digest
                if key not in checked:
                    checked[key] = structure.check(without_combinators(crd.schema))
                crd.without_combinators = checked[key][1].get("problems") or []
            for path, doc in matched[id(crd)][: args.max_instances]:
                expect_invalid = "invalid" in path.lower()
                status, result = structure.run(crd.schema, doc)
                run = Run(path, expect_invalid, status, result)
                run.instance = doc
                if run.verdict not in ("ok", "error"):
                    defaulted = with_defaults(crd.schema, doc)
                    if defaulted != doc:
                        s2, r2 = structure.run(crd.schema, defaulted)
                        run.defaulted = Run(path, expect_invalid, s2, r2)
                        run.defaulted.instance = defaulted
                crd.runs.append(run)
            print(f"[{n}/{len(with_rules)}] {crd.source} {crd.name}: {len(crd.rules)} rules, "
                  f"{'loads' if not crd.problems else 'refused'}, {len(crd.runs)} runs "
                  f"({time.time() - started:.0f}s)", file=sys.stderr)
    finally:
        structure.stop()
        model.server.shutdown()

    report(with_rules, crds, missing, called, labels, unparsed, built, args, escaping)


def final(run):
    """The run that counts: the defaulted one when the instance as is was not ok."""
    return run.defaulted if run.defaulted is not None else run


def report(with_rules, crds, missing, called, labels, unparsed, built, args, escaping):
    unique = {c.digest: c for c in with_rules}
    loads = [c for c in with_rules if not c.problems]
    loads_unique = {c.digest for c in loads}
    rules_total = sum(len(c.rules) for c in unique.values())

    def full(c):  # loads, no rule calls a missing function, and runs on an instance
        return not c.problems and not c.missing

    def ran(c):  # some instance ran through the rules without a rule that could not run
        return any(
            final(r).verdict != "error"
            and not any(k == "rule-error" for k, _ in classify(final(r).errors, c))
            for r in c.runs)

    def ok_valid(c):
        return [r for r in c.runs if not r.expect_invalid]

    complete = [c for c in with_rules if full(c) and ran(c)]
    complete_unique = {c.digest for c in complete}

    print("## CRD schemas from the wild (`x-kubernetes-validations`)\n")
    print(f"structure `target/debug/structure` built {built}; sources: "
          + ", ".join(f"`{l}`" for l in labels)
          + (f" (files that are not YAML, e.g. Helm templates, skipped: {dict(unparsed)})" if unparsed else "")
          + "\n")
    valid_runs = [r for c in with_rules for r in c.runs if not r.expect_invalid]
    invalid_runs = [r for c in with_rules for r in c.runs if r.expect_invalid]
    valid_ok = [r for r in valid_runs if r.verdict == "ok"]
    valid_ok_def = [r for r in valid_runs if final(r).verdict == "ok"]
    invalid_refused = [r for r in invalid_runs if final(r).verdict not in ("ok", "error")]
    invalid_refused_rule = [
        r for c in with_rules for r in c.runs if r.expect_invalid
        and any(k == "rule" for k, _ in classify(final(r).errors, c))
    ]
    print("| | CRD version schemas | distinct schemas |")
    print("|---|---:|---:|")
    print(f"| found (CRD versions) | {len(crds)} | {len({c.digest for c in crds})} |")
    print(f"| with `x-kubernetes-validations` | {len(with_rules)} | {len(unique)} ({rules_total} rules) |")
    print(f"| load (registration check passes) | {len(loads)} | {len(loads_unique)} |")
    print(f"| load, and no rule calls a function structure lacks | "
          f"{sum(1 for c in with_rules if full(c))} | {len({c.digest for c in with_rules if full(c)})} |")
    print(f"| ... and ran on at least one real instance | {len(complete)} | {len(complete_unique)} |")
    print()
    print(f"Instances (manifests of the projects whose apiVersion/kind match; a manifest runs against "
          f"each CRD version schema it matches): {len(valid_runs)} runs of valid examples, "
          f"{len(valid_ok)} `ok` as they are, {len(valid_ok_def)} `ok` with the schema's defaults "
          f"applied first; {len(invalid_runs)} runs of examples the project marks invalid, "
          f"{len(invalid_refused)} refused ({len(invalid_refused_rule)} by a rule's message).\n")

    if missing:
        uses = Counter()
        for c in unique.values():
            for _, rule in c.rules:
                if isinstance(rule, dict) and isinstance(rule.get("rule"), str):
                    for f in functions_of(rule["rule"]) & missing.keys():
                        uses[f] += 1
        print("Functions the rules call that structure's CEL does not declare (rules using each, "
              "distinct schemas; where structure stops it): "
              + ", ".join(f"`{f}` {n} ({missing[f]})" for f, n in uses.most_common()) + ".")
        print(f"Declared and used: " + ", ".join(f"`{f}`" for f in sorted(called - missing.keys())) + ".\n")

    escaped = [(c, r["rule"]) for c in unique.values() for _, r in c.rules
               if isinstance(r, dict) and re.search(r"__\w+__", strip_strings(str(r.get("rule"))))]
    print(f"Kubernetes' escaping of property names in rules (`__namespace__` for a property "
          f"`namespace`, a CEL reserved word; `__dash__`, `__dot__` ...): {len(escaped)} rules in "
          f"{len({c.digest for c, _ in escaped})} distinct schemas use it; structure reads "
          f"`self.__namespace__` as the property `namespace`: {escaping}.\n")
    print("### Per CRD version schema\n")
    print("| source | CRD@version | rules | loads | missing functions | instances: ok / not ok (valid) | invalid examples refused |")
    print("|---|---|---:|---|---|---|---|")
    for c in with_rules:
        if c.problems:
            loads_text = "refused: " + group_reason(c.problems[0]["message"]) + (
                f" (+{len(c.problems) - 1})" if len(c.problems) > 1 else "")
        else:
            loads_text = "yes"
        valid = ok_valid(c)
        okn = sum(1 for r in valid if final(r).verdict == "ok")
        inv = [r for r in c.runs if r.expect_invalid]
        invn = sum(1 for r in inv if final(r).verdict not in ("ok", "error"))
        print(f"| {c.source.split('@')[0]} | {c.name} | {len(c.rules)} | {loads_text} | "
              f"{', '.join(sorted(c.missing)) or '—'} | "
              f"{f'{okn} / {len(valid) - okn}' if valid else '—'} | "
              f"{f'{invn}/{len(inv)}' if inv else '—'} |")
    print()

    print("### What failed, grouped\n")
    refusals = defaultdict(list)
    for c in unique.values():
        for p in c.problems or []:
            refusals[group_reason(p["message"])].append(f"{c.name} {p['pointer']}: {p['message']}")
    costly = [c for c in unique.values() if c.without_combinators is not None]
    if costly:
        costs = [int(m.group(1)) for c in costly for p in c.problems
                 for m in [re.search(r"estimated cost (\d+)", p["message"])] if m]
        print(f"Refused for cost: {len(costly)} distinct schemas, {len(costs)} rules, estimated "
              f"{min(costs):,} to {max(costs):,} against structure's ceiling of 1,000,000; "
              f"{sum(1 for x in costs if x <= 10_000_000)} of these rules are within Kubernetes' "
              f"static per-expression limit (StaticEstimatedCostLimit, 10,000,000; 1,000,000 is "
              f"Kubernetes' runtime PerCallLimit), and Kubernetes accepts these CRDs. With "
              f"oneOf/anyOf/allOf/not dropped (value validations in a structural schema, which "
              f"the bounds are read through), {sum(1 for c in costly if not c.without_combinators)} "
              f"of the {len(costly)} load; the rest still over: "
              + "; ".join(f"{c.name} {len(c.without_combinators)} rules" for c in costly
                          if c.without_combinators) + ".\n")
    if refusals:
        print("Registration refusals (distinct schemas):\n")
        for reason, items in sorted(refusals.items(), key=lambda kv: -len(kv[1])):
            print(f"- **{reason}** ({len(items)})")
            for item in items[: args.show]:
                print(f"    - {item[:300]}")
        print()
    groups = defaultdict(list)
    for c in with_rules:
        for r in c.runs:
            f = final(r)
            if f.verdict == "error":
                kind = ((f.result or {}).get("error") or {}).get("kind", f"HTTP {f.status}")
                key = ("not run: the schema is refused (the call answers invalid-schema)"
                       if kind == "invalid-schema" else f"the call failed: {kind}")
                groups[key].append(f"{c.name} {r.path}")
                continue
            if f.verdict == "ok":
                if r.expect_invalid:
                    groups["an invalid example accepted (`ok`)"].append(f"{c.name} {r.path}")
                continue
            for kind, error in classify(f.errors, c):
                if kind == "rule-error":
                    key = "rule could not run — " + group_reason(error)
                elif kind == "rule":
                    key = ("rule violated (expected: an invalid example)" if r.expect_invalid
                           else "rule violated on a valid example")
                else:
                    key = ("other violation (expected: an invalid example)" if r.expect_invalid
                           else "other (non-rule) violation on a valid example")
                groups[key].append(f"{c.name} {r.path}: {error}")
    if groups:
        print("Instance runs (the run with defaults applied where the instance as is was not ok; "
              "one line an error):\n")
        for reason, items in sorted(groups.items(), key=lambda kv: -len(kv[1])):
            print(f"- **{reason}** ({len(items)})")
            for item in items[: args.show]:
                print(f"    - {item[:300]}")
        print()

    if args.json:
        out = []
        for c in with_rules:
            out.append({
                "source": c.source, "path": c.path, "apiVersion": c.api_version, "kind": c.kind,
                "digest": c.digest, "rules": len(c.rules), "problems": c.problems,
                "missingFunctions": sorted(c.missing),
                "runs": [{
                    "path": r.path, "expectInvalid": r.expect_invalid, "status": r.verdict,
                    "errors": r.errors,
                    "defaulted": None if r.defaulted is None else {
                        "status": r.defaulted.verdict,
                        "errors": r.defaulted.errors},
                } for r in c.runs],
            })
        pathlib.Path(args.json).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
