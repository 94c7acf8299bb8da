#!/usr/bin/env python3
"""scripts/check_layers.py: the source tree keeps its layers.

Each folder of src/ is one layer; LAYERS lists them bottom first.  A file may use its own
folder and the folders below it, never one above, and no group of files may use each other in
a circle.  "Use" is read two ways:

- the #include "folder/file.h" lines of every .c and .h file under src/;
- the symbols each object file needs (nm's U lines), found in the object that defines them;
- at run time, the SQL text a file builds: a string literal that calls one of our own SQL
  functions (backfill_NAME( in the text, or "backfill_NAME" passed to BackfillExtName) uses
  the file whose C function backfill.sql binds NAME to.  Text in an error report
  (errmsg, errhint, ...) is words, not a call; a command for pg_cron (a comment just before
  says "pg_cron runs in a session of its own") is run by pg_cron, not by the file; a text for
  pg_stat_activity (a comment just before says "pg_stat_activity shows it, nothing runs it")
  is words too.

A header belongs to the .c file of the same name beside it (write/swap.h to write/swap.c), so
including it is using that file; a header with no such twin (base/compat.h) stands alone.
docs/architecture.md must list the layers in the same order, as `src/FOLDER/` in the first
column of its table, and name every .c file of the tree in its folder's row, bottom first.

    check_layers.py               check the tree (objects from the last build, if any)
    check_layers.py --self-test   plant an upward include, an include cycle, a file outside the
                                  layers and an upward call through SQL in copies of the
                                  tree, and show that each is refused

Prints each offending pair (or the files of each cycle) and exits 1; else one line, exit 0.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

LAYERS = ['base', 'hash', 'validate', 'record', 'write', 'probe', 'run']
TOP = len(LAYERS)				# src/backfill.c, the module itself, above every layer
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def layer(path):
	"""The rank of a file's folder (path relative to src/), or None if it is in none."""
	parts = path.split('/')
	if len(parts) == 1:
		return TOP
	return LAYERS.index(parts[0]) if len(parts) == 2 and parts[0] in LAYERS else None


def node(path):
	"""The node a file stands for: a header stands for its .c twin when there is one."""
	stem, ext = os.path.splitext(path)
	return stem + '.c' if ext == '.h' and os.path.exists(os.path.join(SRC, stem + '.c')) else path


def sources():
	out = []
	for d, _, files in os.walk(SRC):
		for f in files:
			if f.endswith(('.c', '.h')):
				out.append(os.path.relpath(os.path.join(d, f), SRC))
	return sorted(out)


def include_edges(files):
	"""(from, to, why) for every include of one of our own files."""
	edges = []
	for f in files:
		with open(os.path.join(SRC, f), encoding='utf-8') as fh:
			text = fh.read()
		for inc in INCLUDE.findall(text):
			if os.path.exists(os.path.join(SRC, inc)):
				edges.append((f, inc, 'includes ' + inc))
	return edges


def symbol_edges(files):
	"""(from, to, why) for every symbol an object needs from another of ours."""
	objs = [f[:-2] + '.o' for f in files if f.endswith('.c')]
	objs = [o for o in objs if os.path.exists(os.path.join(SRC, o))]
	defined, needed = {}, {}
	for o in objs:
		nm = subprocess.run(['nm', os.path.join(SRC, o)], capture_output=True, text=True, check=True)
		for line in nm.stdout.splitlines():
			p = line.split()
			if len(p) == 3 and p[1] in 'TDBRGSC':
				defined[p[2]] = o[:-2] + '.c'
			elif len(p) == 2 and p[0] == 'U':
				needed.setdefault(o[:-2] + '.c', set()).add(p[1])
	edges = []
	for f, syms in needed.items():
		by = {}
		for s in syms:
			if s in defined and defined[s] != f:
				by.setdefault(defined[s], []).append(s)
		for g, ss in by.items():
			edges.append((f, g, 'calls ' + ', '.join(sorted(ss))))
	return edges, len(objs)


SQLFUNC = re.compile(r"CREATE (?:FUNCTION|PROCEDURE|AGGREGATE) @extschema@\.(backfill_\w+)\(.*?"
					 r"(?:AS 'MODULE_PATHNAME', '(\w+)'|;)", re.S)
LITERAL = re.compile(r'"((?:[^"\\\n]|\\.)*)"')
REPORT = re.compile(r'\b(errmsg|errmsg_plural|errhint|errdetail|errdetail_internal|errcontext|elog)\b')


def sql_edges(files):
	"""(from, to, why) for every SQL call, in text a file builds, of one of our functions."""
	with open(os.path.join(ROOT, 'backfill.sql'), encoding='utf-8') as fh:
		script = fh.read()
	symbols = {name: sym for name, sym in SQLFUNC.findall(script) if sym}
	defined = {}
	for f in files:
		if f.endswith('.c'):
			with open(os.path.join(SRC, f), encoding='utf-8') as fh:
				for sym in re.findall(r'^(\w+)\(PG_FUNCTION_ARGS\)', fh.read(), re.M):
					defined[sym] = f
	edges = []
	for f in files:
		if not f.endswith('.c'):
			continue
		with open(os.path.join(SRC, f), encoding='utf-8') as fh:
			lines = fh.read().split('\n')
		in_report = False
		cron_until = 0
		for n, line in enumerate(lines, 1):
			if 'pg_cron runs in a session of its own' in line or 'pg_stat_activity shows it, nothing runs it' in line:
				cron_until = n + 8		# the comment, then its statement
			# an error report's words run from its function to the end of its statement
			if REPORT.search(line):
				in_report = True
			if not in_report and n > cron_until:
				for lit in LITERAL.findall(line):
					for name in set(re.findall(r'\b(backfill_\w+)\s*\(', lit)) | \
							({lit} if lit in symbols and 'BackfillExtName' in line else set()):
						g = defined.get(symbols.get(name, ''))
						if g and g != f:
							edges.append((f, g, 'calls %s through SQL (line %d)' % (name, n)))
			if in_report and line.rstrip().endswith(';'):
				in_report = False
	return edges


def graph_pairs(graph):
	return [(a, b) for a, bs in graph.items() for b in bs]


def cycles(nodes, graph):
	"""The strongly connected components of more than one node (Tarjan, iteratively)."""
	index, low, onstack, stack, out = {}, {}, set(), [], []
	counter = 0
	for root in nodes:
		if root in index:
			continue
		work = [(root, iter(sorted(graph.get(root, ()))))]
		index[root] = low[root] = counter
		counter += 1
		stack.append(root)
		onstack.add(root)
		while work:
			v, it = work[-1]
			advanced = False
			for w in it:
				if w not in index:
					index[w] = low[w] = counter
					counter += 1
					stack.append(w)
					onstack.add(w)
					work.append((w, iter(sorted(graph.get(w, ())))))
					advanced = True
					break
				if w in onstack:
					low[v] = min(low[v], index[w])
			if advanced:
				continue
			work.pop()
			if work:
				low[work[-1][0]] = min(low[work[-1][0]], low[v])
			if low[v] == index[v]:
				comp = []
				while True:
					w = stack.pop()
					onstack.discard(w)
					comp.append(w)
					if w == v:
						break
				if len(comp) > 1:
					out.append(sorted(comp))
	return out


def check_doc(files, uses):
	"""docs/architecture.md: the layers in order, and every .c file named."""
	problems = []
	doc = os.path.join(ROOT, 'docs', 'architecture.md')
	if not os.path.exists(doc):
		return ['docs/architecture.md is missing: it shows the layers of src/']
	with open(doc, encoding='utf-8') as fh:
		text = fh.read()
	listed = re.findall(r'^\|\s*`src/([a-z_]+)/`', text, re.M)
	if listed != LAYERS:
		problems.append('docs/architecture.md lists the layers as %s, the tree has %s (bottom first)'
						% (' '.join(listed) or 'none', ' '.join(LAYERS)))
	order = {}
	for folder, row in re.findall(r'^\|\s*`src/([a-z_]+)/`\s*\|([^|]*)\|', text, re.M):
		for i, name in enumerate(re.findall(r'`([a-z_]+\.c)`', row)):
			order[folder + '/' + name] = i
	for f in files:
		if f.endswith('.c') and '/' in f and f not in order:
			problems.append('docs/architecture.md does not name src/%s in the row of src/%s/'
							% (f, f.split('/')[0]))
	for a, b in sorted(uses):
		if a in order and b in order and a.split('/')[0] == b.split('/')[0] and order[b] > order[a]:
			problems.append('docs/architecture.md lists src/%s before src/%s, which it uses '
							'(bottom first within a folder too)' % (a, b))
	return problems


def check(root):
	global ROOT, SRC
	ROOT, SRC = root, os.path.join(root, 'src')
	files = sources()
	problems = []
	for f in files:
		if layer(f) is None:
			problems.append('src/%s is in no layer (the layers are src/%s/)' % (f, '/, src/'.join(LAYERS)))
	files = [f for f in files if layer(f) is not None]
	edges = include_edges(files)
	sym, nobj = symbol_edges(files)
	edges += sym + sql_edges(files)
	graph, why = {}, {}
	for a, b, w in edges:
		if layer(b) > layer(a):
			problems.append('src/%s %s: %s may not use %s, a layer above it'
							% (a, w, LAYERS[layer(a)] if layer(a) < TOP else 'src', LAYERS[layer(b)]))
		na, nb = node(a), node(b)
		if na != nb:
			graph.setdefault(na, set()).add(nb)
			why.setdefault((na, nb), []).append('src/%s %s' % (a, w))
	nodes = sorted({node(f) for f in files})
	found = cycles(nodes, graph)
	for comp in found:
		inside = set(comp)
		detail = ['    ' + w for (a, b), ws in sorted(why.items()) if a in inside and b in inside for w in ws]
		problems.append('a cycle joins %s:\n%s' % (', '.join('src/' + c for c in comp), '\n'.join(detail)))
	problems += check_doc(files, set(graph_pairs(graph)))
	return problems, len(files), nobj, len(edges), len(found)


def self_test(root):
	"""Each planted fault must be refused; the tree itself must pass."""
	plants = [
		('an upward include', 'base/spi_util.c', '#include "run/runstate.h"\n'),
		('an include cycle', 'base/spi_util.h', '#include "base/relation.h"\n'),
		('a file in no layer', 'misc/stray.h', '/* a header outside the layers */\n'),
		('an upward call through SQL', 'write/archive.c',
		 'static const char *planted = "CALL backfill_run(1)";\n'),
	]
	bad = 0
	problems = check(root)[0]
	print('self-test: the tree itself: %s' % ('passes' if not problems else 'FAILS (%d problems)' % len(problems)))
	bad += bool(problems)
	for what, target, line in plants:
		tmp = tempfile.mkdtemp(prefix='check_layers.')
		try:
			shutil.copytree(os.path.join(root, 'src'), os.path.join(tmp, 'src'))
			shutil.copytree(os.path.join(root, 'docs'), os.path.join(tmp, 'docs'))
			shutil.copy(os.path.join(root, 'backfill.sql'), tmp)
			path = os.path.join(tmp, 'src', target)
			os.makedirs(os.path.dirname(path), exist_ok=True)
			mode = 'a' if os.path.exists(path) else 'w'
			with open(path, mode, encoding='utf-8') as fh:
				fh.write(line)
			got = [p for p in check(tmp)[0] if p not in problems and ('src/' + target) in p]
			if got:
				print('self-test: %s (%s): refused (%s)' % (what, target, got[0].splitlines()[0]))
			else:
				print('self-test: %s (%s): NOT refused' % (what, target))
				bad += 1
		finally:
			shutil.rmtree(tmp)
	return 1 if bad else 0


def main():
	root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
	if sys.argv[1:] == ['--self-test']:
		return self_test(root)
	problems, nfiles, nobj, nedges, ncycles = check(root)
	for p in problems:
		print('layers: ' + p)
	if problems:
		print('layers: FAIL: %d problem%s' % (len(problems), '' if len(problems) == 1 else 's'))
		return 1
	if nobj == 0:
		print('layers: FAIL: no object files under src/: build first (make)')
		return 1
	print('layers: held: %d files in %d layers, %d uses (%d objects read), none upward, no cycle'
		  % (nfiles, len(LAYERS), nedges, nobj))
	return 0


if __name__ == '__main__':
	sys.exit(main())
