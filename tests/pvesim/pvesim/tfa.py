"""Password login with a second factor (TOTP), as PVE 9 does it: POST /access/ticket in one or two steps.

Sources (pve-access-control, proxmox-rs and proxmox-perl-rs as of 2026):
* PVE/API2/AccessControl.pm `create_ticket` / `create_ticket_do`: any failure is HTTP 401
  `authentication failure` (no detail, against user enumeration); `otp` together with
  `tfa-challenge` is refused; a user with a second factor who sends no `otp` gets a ticket that
  only carries the challenge (`!tfa!<challenge>`) and `NeedTFA: 1`, without `cap`.
* PVE/AccessControl.pm `authenticate_user` / `authenticate_2nd_new_do`: with `tfa-challenge`, the
  `password` parameter is the answer to it; without, the password is checked first, then an `otp`
  (if any) is verified at once. An `otp` for a user without a second factor fails (`no such
  challenge`).
* proxmox-tfa `api/mod.rs` `TfaResponse::from_str`: an answer is `totp:<code>`, `recovery:<key>`,
  `u2f:...` or `webauthn:...`; anything else is refused. `TfaUserData::verify_totp`: a code of the
  30-second steps -1..=1 is accepted, but not one of a step already used (`rejecting reused TOTP
  value`, since PVE enables the lockout: pve-rs `bindings/tfa.rs` `enable_lockout`); each failure
  counts, and after 8 (`totp_failure_limit`) TOTP is locked for that user.
* proxmox-tfa `totp.rs`: RFC 6238 TOTP, HMAC-SHA1, 6 digits, 30-second period by default.

A challenge ticket is not a login ticket: used as `PVEAuthCookie` it gets fakepve's 401 `permission
denied - invalid PVE ticket`, as PVE's verify_ticket fails on it (it is signed with the user as
additional data).
"""

import base64
import hashlib
import hmac
import secrets
import struct
import time

from fakepve.model import PveError
from fakepve.server import ok, params

TOTP_STEP = 30
TOTP_DIGITS = 6
TOTP_WINDOW = (-1, 0, 1)
TOTP_FAILURE_LIMIT = 8


def totp_code(secret, at=None, digits=TOTP_DIGITS, step=TOTP_STEP):
    """The RFC 6238 code of a base32 `secret` at time `at` (seconds since the epoch, default now)."""
    return hotp_code(secret, int((time.time() if at is None else at) // step), digits)


def hotp_code(secret, counter, digits=TOTP_DIGITS):
    """RFC 4226 HOTP value of counter `counter` (the TOTP of its step)."""
    key = base64.b32decode(secret.upper() + '=' * (-len(secret) % 8))
    mac = hmac.new(key, struct.pack('>Q', counter), hashlib.sha1).digest()
    offset = mac[-1] & 0x0F
    value = struct.unpack('>I', mac[offset:offset + 4])[0] & 0x7FFFFFFF
    return str(value % 10 ** digits).zfill(digits)


def _auth_failure():
    return PveError(401, 'authentication failure')


class TfaMixin(object):
    """Mixin for Pvesim (in front of AdminMixin and FakePve): users with a TOTP second factor and
    PVE's ticket call for them. State: `totp_users` {userid: {secret, last_count, failures}} and
    `tfa_challenges` {challenge ticket: {user, expires}}, both reset with the seed."""

    def _sim_init(self):
        super()._sim_init()
        self.totp_users = {}
        self.tfa_challenges = {}

    def add_user(self, userid, info):
        """A seed's or /_sim/users' user; `totp` (a base32 secret) gives it a TOTP second factor."""
        super().add_user(userid, info)
        if info.get('totp'):
            self.add_totp(userid, info['totp'])

    def add_totp(self, userid, secret):
        """Give `userid` a TOTP factor with this base32 secret (PVE: POST /access/tfa/{userid})."""
        hotp_code(secret, 0)  # a secret that is not base32 fails here, not at login
        self.totp_users[userid] = {'secret': secret, 'last_count': None, 'failures': 0}

    def _verify_tfa_response(self, user, response):
        """proxmox-tfa `verify` / `verify_totp` for a TOTP-only user: True when accepted."""
        entry = self.totp_users[user]
        if not isinstance(response, str) or not response.startswith('totp:'):
            # recovery keys, u2f and webauthn are not modelled: this user has none of them.
            return False
        if entry['failures'] >= TOTP_FAILURE_LIMIT:
            return False
        code = response[len('totp:'):]
        now = int(time.time() // TOTP_STEP)
        for delta in TOTP_WINDOW:
            count = now + delta
            if hmac.compare_digest(hotp_code(entry['secret'], count), code):
                if entry['last_count'] is not None and count <= entry['last_count']:
                    break  # rejecting reused TOTP value
                entry['last_count'] = count
                entry['failures'] = 0
                return True
        entry['failures'] += 1
        return False

    def _tfa_challenge_ticket(self, user):
        """The `!tfa!` ticket of a TOTP challenge (its data is the challenge, `{"totp":true}`)."""
        ticket = 'PVE:!tfa!{{"totp"%3Atrue}}:{0:08X}::{1}'.format(int(time.time()), secrets.token_hex(24))
        self.tfa_challenges[ticket] = {'user': user, 'expires': time.time() + self.ticket_ttl}
        return ticket

    async def _ticket(self, request):
        p = await params(request)
        user = str(p.get('username', ''))
        if p.get('realm'):
            user += '@' + str(p['realm'])
        elif '@' not in user:
            user += '@pam'
        password, otp, challenge = p.get('password', ''), p.get('otp'), p.get('tfa-challenge')
        if otp is not None and challenge is not None:
            raise _auth_failure()  # TFA response should be in 'password', not 'otp' ...
        if challenge is not None:
            # The second step: `password` answers the challenge the first step gave.
            pending = self.tfa_challenges.get(challenge)
            if (pending is None or pending['user'] != user or pending['expires'] < time.time()
                    or user not in self.totp_users or not self._verify_tfa_response(user, password)):
                raise _auth_failure()
        else:
            if not self.check_password(user, password):
                raise _auth_failure()
            if user in self.totp_users:
                if otp is None:
                    csrf = '{0:08X}:{1}'.format(int(time.time()), secrets.token_urlsafe(32))
                    return ok({'ticket': self._tfa_challenge_ticket(user), 'username': user,
                               'CSRFPreventionToken': csrf, 'NeedTFA': 1})
                if not self._verify_tfa_response(user, otp):
                    raise _auth_failure()
            elif otp is not None:
                raise _auth_failure()  # no such challenge
        ticket, csrf = self.issue_ticket(user)
        return ok({'ticket': ticket, 'CSRFPreventionToken': csrf, 'username': user, 'cap': {}})
