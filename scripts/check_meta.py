#!/usr/bin/env python3
"""scripts/check_meta.py: META.json (PGXN) and LICENSE say what the extension says of itself.

META.json must be valid JSON with the fields PGXN's spec requires (name, abstract, version,
maintainer, license, provides, meta-spec); its name and the one extension it provides must be
backfill.control's; every version in it must be the control file's default_version as
PGXN writes it (1.0 -> 1.0.0); the provided file must be the install script of that version
(backfill.sql, installed as backfill--VERSION.sql) and exist; PostgreSQL 15 must be the oldest server it requires; its license must be
postgresql and LICENSE must hold the PostgreSQL License.

    check_meta.py               check the checkout
    check_meta.py --self-test   copies of META.json with a fault planted must each be refused

Prints each problem and exits 1; else one line, exit 0.
"""
import json
import os
import re
import shutil
import sys
import tempfile

REQUIRED = ['name', 'abstract', 'version', 'maintainer', 'license', 'provides', 'meta-spec']


def control(root):
	"""The extension's name and default_version, from its control file."""
	files = [f for f in os.listdir(root) if f.endswith('.control')]
	if len(files) != 1:
		raise SystemExit('meta: FAIL: expected one .control file, found %d' % len(files))
	with open(os.path.join(root, files[0]), encoding='utf-8') as fh:
		m = re.search(r"^default_version\s*=\s*'([^']+)'", fh.read(), re.M)
	return files[0][:-len('.control')], m.group(1) if m else None


def semver(v):
	"""A control file's version as PGXN writes it: 1.0 -> 1.0.0."""
	parts = v.split('.')
	return '.'.join(parts + ['0'] * (3 - len(parts)))


def check(root):
	problems = []
	name, default = control(root)
	try:
		with open(os.path.join(root, 'META.json'), encoding='utf-8') as fh:
			meta = json.load(fh)
	except (OSError, ValueError) as e:
		return ['META.json is not valid JSON: %s' % e]
	for f in REQUIRED:
		if f not in meta:
			problems.append('META.json lacks "%s"' % f)
	if meta.get('name') != name:
		problems.append('META.json names %r, the control file %r' % (meta.get('name'), name))
	want = semver(default or '')
	if meta.get('version') != want:
		problems.append('META.json version %s, the control file\'s default_version %s (%s)'
						% (meta.get('version'), default, want))
	provides = meta.get('provides', {})
	if list(provides) != [name]:
		problems.append('META.json provides %s, not the one extension %s' % (sorted(provides), name))
	ext = provides.get(name, {})
	if ext.get('version') != want:
		problems.append('META.json provides %s %s, the control file\'s default_version %s'
						% (name, ext.get('version'), default))
	# the install script of default_version: NAME.sql, installed as NAME--VERSION.sql
	script = '%s.sql' % name
	if ext.get('file') != script or not os.path.exists(os.path.join(root, script)):
		problems.append('META.json provides file %r, the install script is %s' % (ext.get('file'), script))
	pg = meta.get('prereqs', {}).get('runtime', {}).get('requires', {}).get('PostgreSQL')
	if pg != '15.0.0':
		problems.append('META.json requires PostgreSQL %s, the oldest server supported is 15.0.0' % pg)
	if meta.get('license') != 'postgresql':
		problems.append('META.json license %r, not "postgresql"' % meta.get('license'))
	try:
		with open(os.path.join(root, 'LICENSE'), encoding='utf-8') as fh:
			if not fh.read().startswith('PostgreSQL License'):
				problems.append('LICENSE does not hold the PostgreSQL License')
	except OSError:
		problems.append('there is no LICENSE file')
	return problems


def self_test(root):
	plants = [
		('invalid JSON', lambda t: t.replace('{', '[', 1)),
		('another version', lambda t: re.sub(r'"version": "[^"]*"', '"version": "9.9.0"', t, count=1)),
		('another license', lambda t: t.replace('"postgresql"', '"mit"')),
		('no abstract', lambda t: re.sub(r'\n   "abstract": [^\n]*', '', t, count=1)),
	]
	bad = 0
	base = check(root)
	print('self-test: the checkout itself: %s' % ('passes' if not base else 'FAILS (%s)' % base[0]))
	bad += bool(base)
	with open(os.path.join(root, 'META.json'), encoding='utf-8') as fh:
		text = fh.read()
	for what, plant in plants:
		tmp = tempfile.mkdtemp(prefix='check_meta.')
		try:
			for f in os.listdir(root):
				if f.endswith('.control') or f in ('LICENSE',) or re.match(r'[^-]*\.sql$', f):
					shutil.copy(os.path.join(root, f), tmp)
			with open(os.path.join(tmp, 'META.json'), 'w', encoding='utf-8') as fh:
				fh.write(plant(text))
			got = check(tmp)
			print('self-test: %s: %s' % (what, 'refused (%s)' % got[0] if got else 'NOT refused'))
			bad += not got
		finally:
			shutil.rmtree(tmp)
	return 1 if bad else 0


def main():
	root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
	if sys.argv[1:] == ['--self-test']:
		return self_test(root)
	problems = check(root)
	for p in problems:
		print('meta: ' + p)
	if problems:
		print('meta: FAIL: %d problem%s' % (len(problems), '' if len(problems) == 1 else 's'))
		return 1
	print('meta: held: META.json is valid JSON, provides %s %s as %s.control does, under the PostgreSQL License'
		  % (control(root)[0], semver(control(root)[1]), control(root)[0]))
	return 0


if __name__ == '__main__':
	sys.exit(main())
