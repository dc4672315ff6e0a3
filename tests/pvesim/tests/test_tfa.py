"""Password login of a user with a TOTP second factor (pvesim/tfa.py), as PVE 9 answers it.

Sources: pve-access-control PVE/API2/AccessControl.pm `create_ticket` / `create_ticket_do` and
PVE/AccessControl.pm `authenticate_user` / `authenticate_2nd_new_do`; proxmox-tfa api/mod.rs
`TfaResponse::from_str`, `verify_totp` (step window -1..=1, reuse refused, 8 failures lock TOTP).
"""

import base64
import time

from conftest import error_of
from pvesim.tfa import totp_code

USER = 'tfa-user@pve'
PASSWORD = 'pw-with-tfa'
SECRET = base64.b32encode(b'ferro-proxmox-tfa-test-key').decode().rstrip('=')


def tfa_user(sim, userid=USER):
    sim.add_user(userid, password=PASSWORD, acl={'/': ['VM.Audit', 'Sys.Audit']}, totp=SECRET)


def login(sim, **params):
    return sim.api('POST', '/access/ticket', dict({'username': USER}, **params), token=False)


def refused(sim, **params):
    err = error_of(sim.api, 'POST', '/access/ticket', dict({'username': USER}, **params), token=False)
    return (err.status, err.message)


def later_code():
    """A code outside the accepted window (five steps ahead)."""
    return totp_code(SECRET, time.time() + 150)


def test_totp_is_rfc_6238():
    # RFC 6238 appendix B, SHA1 (proxmox-tfa totp.rs computes the same); its key in base32.
    key = base64.b32encode(b'12345678901234567890').decode()
    assert totp_code(key, 59, digits=8) == '94287082'
    assert totp_code(key, 1111111109, digits=8) == '07081804'
    assert totp_code(key, 59) == '287082'


def test_two_step_login_challenge_then_ticket(sim):
    # AccessControl.pm create_ticket_do: without otp, a user with a second factor gets a ticket that
    # only holds the challenge ("!tfa!...") and NeedTFA, no cap; it is no login ticket.
    tfa_user(sim)
    first = login(sim, password=PASSWORD)
    assert first['NeedTFA'] == 1 and first['ticket'].startswith('PVE:!tfa!') and 'cap' not in first
    err = error_of(sim.api, 'GET', '/nodes', token=False, ticket=(first['ticket'], first['CSRFPreventionToken']))
    assert err.status == 401
    # authenticate_user with tfa-challenge: `password` carries the answer, "totp:<code>".
    second = login(sim, **{'tfa-challenge': first['ticket'], 'password': 'totp:' + totp_code(SECRET)})
    assert 'NeedTFA' not in second and 'cap' in second and second['username'] == USER
    assert sim.api('GET', '/nodes', token=False, ticket=(second['ticket'], second['CSRFPreventionToken']))
    # The request log never shows the password, the code or the challenge.
    logged = [r['body'] for r in sim.requests() if r['path'].endswith('/access/ticket')]
    assert logged and all(b.get(k) in (None, '**********') for b in logged
                          for k in ('password', 'tfa-challenge', 'otp'))


def test_one_step_login_with_otp(sim):
    # authenticate_user: after the password, an `otp` is verified at once (authenticate_2nd_new).
    tfa_user(sim)
    answer = login(sim, password=PASSWORD, otp='totp:' + totp_code(SECRET))
    assert 'NeedTFA' not in answer and answer['ticket'].startswith('PVE:' + USER + ':')


def test_wrong_missing_reused_or_misplaced_codes_are_an_authentication_failure(sim):
    tfa_user(sim)
    sim.add_user('plain@pve', password=PASSWORD)
    failure = (401, 'authentication failure')
    challenge = login(sim, password=PASSWORD)['ticket']
    # a code outside the window (verify_totp) and a bare code without its type (TfaResponse::from_str)
    assert refused(sim, **{'tfa-challenge': challenge, 'password': 'totp:' + later_code()}) == failure
    assert refused(sim, **{'tfa-challenge': challenge, 'password': totp_code(SECRET)}) == failure
    assert refused(sim, password=PASSWORD, otp=later_code()) == failure
    # otp together with tfa-challenge (create_ticket_do), and an otp for a user without a second
    # factor (authenticate_2nd_new_do: "no such challenge")
    assert refused(sim, otp='totp:' + totp_code(SECRET), **{'tfa-challenge': challenge, 'password': 'x'}) == failure
    assert refused(sim, username='plain@pve', password=PASSWORD, otp='totp:' + totp_code(SECRET)) == failure
    # the challenge of one user does not serve another
    sim.add_user('other@pve', password=PASSWORD, totp=SECRET)
    assert refused(sim, username='other@pve', **{'tfa-challenge': challenge,
                                                 'password': 'totp:' + totp_code(SECRET)}) == failure
    # a right code is accepted once: the next login with it is refused (verify_totp, last_count)
    code = 'totp:' + totp_code(SECRET)
    assert login(sim, **{'tfa-challenge': challenge, 'password': code})['username'] == USER
    assert refused(sim, password=PASSWORD, otp=code) == failure
    assert refused(sim, **{'tfa-challenge': login(sim, password=PASSWORD)['ticket'], 'password': code}) == failure
    # a wrong password never reaches the second factor
    assert refused(sim, password='wrong', otp=code) == failure


def test_eight_failures_lock_totp(sim):
    # proxmox-tfa totp_failure_limit (8): then even the right code is refused.
    tfa_user(sim)
    for _ in range(8):
        assert refused(sim, password=PASSWORD, otp='totp:' + later_code())[0] == 401
    assert refused(sim, password=PASSWORD, otp='totp:' + totp_code(SECRET))[0] == 401
