"""A small reader of Proxmox VE's Perl: masks comments, POD and string literals (keeping every
offset and line), then finds packages, subs, handlers, calls and refusal sites. Written for the
perltidy'd style of Proxmox's repositories (a top-level sub ends at a `}` in column 0), not for
Perl at large."""

import re

QUOTE_OPS = ('qq', 'qw', 'qr', 'q', 'm', 's', 'tr', 'y')
TWO_PART = ('s', 'tr', 'y')
PAIRS = {'(': ')', '[': ']', '{': '}', '<': '>'}
# after one of these (the last non-space token), a `/` opens a regex, not a division
REGEX_AFTER_CHARS = set('(,=!~&|{;?:[')
REGEX_AFTER_WORDS = {'split', 'grep', 'if', 'unless', 'and', 'or', 'not', 'return', 'when', 'map', 'while'}
HEREDOC = re.compile(r'<<(~?)(?:"(\w+)"|\'(\w+)\'|([A-Za-z_]\w*))')


class Masked:
    """`code`: the text with comments and POD blanked and the inside of every string literal
    replaced by `x` (newlines kept); `strings`: [(start, end)] of each literal's inside, in the
    original text."""

    def __init__(self, text):
        self.text = text
        self.strings = []
        out = list(text)
        n = len(text)
        i = 0
        last = ';'  # the last significant token (a char, or a word)
        line_start = True
        pending_heredocs = []

        def blank(a, b, keep_string=True):
            for k in range(a, b):
                if out[k] != '\n':
                    out[k] = 'x' if keep_string else ' '
            if keep_string:
                self.strings.append((a, b))

        def scan_delimited(j, opener):
            """index after the closing delimiter of a literal whose opener is at j."""
            closer = PAIRS.get(opener, opener)
            depth = 1
            k = j + 1
            while k < n:
                c = text[k]
                if c == '\\':
                    k += 2
                    continue
                if opener != closer and c == opener:
                    depth += 1
                elif c == closer:
                    depth -= 1
                    if depth == 0:
                        return k + 1
                k += 1
            return n

        while i < n:
            c = text[i]
            if c == '\n':
                if pending_heredocs:
                    # the body of each heredoc opened on this line, up to its terminator
                    k = i + 1
                    for indent, term in pending_heredocs:
                        body_start = k
                        while k < n:
                            e = text.find('\n', k)
                            e = n if e < 0 else e
                            line = text[k:e]
                            if (line.strip() if indent else line) == term:
                                blank(body_start, k)
                                k = e
                                break
                            k = e + 1
                        k += 1
                    pending_heredocs = []
                    i = k - 1 if k <= n else n
                    line_start = True
                    i += 1
                    continue
                line_start = True
                i += 1
                continue
            if line_start and c == '=' and re.match(r'=[a-zA-Z]', text[i:i + 2]):
                end = re.compile(r'^=cut\b.*$', re.M).search(text, i)
                stop = end.end() if end else n
                blank(i, stop, keep_string=False)
                i = stop
                continue
            if line_start and text.startswith('__END__', i) or line_start and text.startswith('__DATA__', i):
                blank(i, n, keep_string=False)
                break
            if not c.isspace():
                line_start = False
            if c == '#' and not (i > 0 and text[i - 1] == '$'):
                e = text.find('\n', i)
                e = n if e < 0 else e
                blank(i, e, keep_string=False)
                i = e
                continue
            if c in '"\'`':
                end = scan_delimited(i, c)
                blank(i + 1, end - 1)
                i = end
                last = 'STR'
                continue
            if c == '<' and text.startswith('<<', i):
                h = HEREDOC.match(text, i)
                # a quoted terminator, or a bare upper-case one right after `<<` (a shift has operands)
                if h and (h.group(2) or h.group(3) or re.match(r'[A-Z_][A-Z0-9_]*$', h.group(4) or '')):
                    pending_heredocs.append((h.group(1) == '~', h.group(2) or h.group(3) or h.group(4)))
                    i = h.end()
                    last = 'STR'
                    continue
            if c == '/' and (last in REGEX_AFTER_CHARS or last in REGEX_AFTER_WORDS):
                end = scan_delimited(i, '/')
                blank(i + 1, end - 1)
                i = end
                while i < n and text[i].isalpha():
                    i += 1
                last = 'STR'
                continue
            if c.isalpha() or c == '_':
                m = re.compile(r'[A-Za-z_]\w*').match(text, i)
                word = m.group(0)
                j = m.end()
                prev = text[i - 1] if i > 0 else ' '
                sigil_or_arrow = prev in '$@%&' or text[max(0, i - 2):i] == '->' or prev == ':'
                if word in QUOTE_OPS and not sigil_or_arrow and j < n:
                    d = text[j]
                    k = j
                    if d.isspace() and word in ('qw', 'q', 'qq'):
                        while k < n and text[k].isspace():
                            k += 1
                        d = text[k] if k < n else ''
                    if d and not d.isalnum() and not d.isspace() and d not in ',;)]}=>' + '_' \
                            and not text.startswith('=>', k):
                        end = scan_delimited(k, d)
                        blank(k + 1, end - 1)
                        if word in TWO_PART:
                            if d in PAIRS:
                                while end < n and text[end].isspace():
                                    end += 1
                                d2 = text[end]
                                end2 = scan_delimited(end, d2)
                                blank(end + 1, end2 - 1)
                                end = end2
                            else:
                                end2 = scan_delimited(end - 1, d)
                                blank(end, end2 - 1)
                                end = end2
                        while end < n and text[end].isalpha():
                            end += 1
                        i = end
                        last = 'STR'
                        continue
                last = word
                i = j
                continue
            if c.isdigit():
                m = re.compile(r'\d[\w.]*').match(text, i)
                i = m.end()
                last = 'NUM'
                continue
            if c == '$' and i + 1 < n and text[i + 1] in '#':
                i += 2
                last = 'VAR'
                continue
            if not c.isspace():
                last = c if c not in '$@%' else 'VAR'
                if c in '$@%':
                    # a variable: skip its name so that `$s` or `%q` is not a quote operator
                    m = re.compile(r'[$@%]+(?:\{\^?\w+\}|[\w:]+|.)').match(text, i)
                    if m:
                        i = m.end()
                        last = 'VAR'
                        continue
            i += 1
        self.code = ''.join(out)
        self._lines = [0]
        for k, ch in enumerate(text):
            if ch == '\n':
                self._lines.append(k + 1)

    def line(self, offset):
        """1-based line of an offset."""
        lo, hi = 0, len(self._lines)
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if self._lines[mid] <= offset:
                lo = mid
            else:
                hi = mid
        return lo + 1


def statement_end(code, start):
    """Where the expression starting at `start` ends: a `;`, a statement modifier (`if`, `unless`,
    `or`) or an unmatched closing bracket, at bracket depth 0."""
    depth = 0
    i = start
    n = len(code)
    while i < n:
        c = code[i]
        if c in '([{':
            depth += 1
        elif c in ')]}':
            if depth == 0:
                return i
            depth -= 1
        elif c == ';' and depth == 0:
            return i
        elif depth == 0 and c == ' ' and re.match(r' (?:if|unless|or|and|for|foreach)\b', code[i:i + 9]):
            return i
        i += 1
    return n


def bracket_end(code, open_at):
    """Index after the bracket matching the one at `open_at`."""
    depth = 0
    for i in range(open_at, len(code)):
        c = code[i]
        if c in '([{':
            depth += 1
        elif c in ')]}':
            depth -= 1
            if depth == 0:
                return i + 1
    return len(code)


def template(masked, start, end):
    """The message of an expression: string literals' text joined, every other operand kept as
    `{expr}` (Perl's interpolations inside a literal stay as written)."""
    text = masked.text
    parts = []
    literals = [(a, b) for a, b in masked.strings if start <= a < end]
    pos = start
    for a, b in literals:
        between = text[pos:a - 1].strip()
        between = re.sub(r'^\(|\)$', '', between).strip()
        between = between.strip('.').strip()
        if between and between not in ('(', ')', ','):
            parts.append('{%s}' % ' '.join(between.split()))
        parts.append(text[a:b])
        pos = b + 1
    rest = text[pos:end].strip().strip('.').strip()
    rest = re.sub(r'^\)+$', '', rest).strip()
    if rest:
        parts.append('{%s}' % ' '.join(rest.split()))
    return ''.join(parts)
