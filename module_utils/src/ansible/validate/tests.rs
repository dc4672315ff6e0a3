//! Unit tests of `validate` (and of the spec declarations it reads).

use super::*;
use serde_json::json;

const OPTS: &[OptionSpec] = &[
    OptionSpec::new("vmid", Kind::Int, &["The VM id."]),
    OptionSpec::new("name", Kind::Str, &["The VM name."]).aliases(&["vmname"]),
    OptionSpec::new("state", Kind::Str, &["State."])
        .default(DefaultValue::Str("present"))
        .choices(&["present", "absent"]),
    OptionSpec::new("force", Kind::Bool, &["Force."]).default(DefaultValue::Bool(false)),
    OptionSpec::new("rate", Kind::Float, &["Rate."]),
    OptionSpec::new("tags", Kind::List(Elem::Str), &["Tags."]),
    OptionSpec::new("secret", Kind::Str, &["A secret."]).no_log().env(&["TEST_SECRET"]),
    OptionSpec::new("size", Kind::Str, &["Size."]),
    OptionSpec::new("disk", Kind::Dict, &["A disk."]).suboptions(DISK),
    OptionSpec::new("disks", Kind::List(Elem::Dict), &["Disks."]).suboptions(DISK),
];

const DISK: &[OptionSpec] = &[
    OptionSpec::new("storage", Kind::Str, &["Storage."]).required(),
    OptionSpec::new("version", Kind::Str, &["Version."]).default(DefaultValue::Str("2.0")).choices(&["2.0", "1.2"]),
    OptionSpec::new("keys", Kind::Bool, &["Keys."]),
    OptionSpec::new("pin", Kind::Str, &["A secret."]).no_log().aliases(&["pincode"]),
];

const SPEC: ModuleSpec = ModuleSpec {
    name: "test_mod",
    short_description: "test",
    description: &[],
    options: OPTS,
    option_groups: &[],
    mutually_exclusive: &[&["vmid", "name"]],
    required_together: &[],
    required_one_of: &[],
    required_if: &[RequiredIf { key: "state", value: "absent", requirements: &["vmid", "name"], any: true }],
    required_by: &[("size", &["rate"])],
    check_mode: Support::Full,
    diff_mode: Support::Full,
    notes: &[],
    examples: "",
    returns: "",
};

fn run(args: Value) -> Result<Args> {
    run_env(args, &|_| None)
}

fn run_env(args: Value, env: &dyn Fn(&str) -> Option<String>) -> Result<Args> {
    let Value::Object(map) = args else { panic!("test args must be an object") };
    validate(&SPEC, &map, env)
}

fn err(args: Value) -> String {
    match run(args) {
        Err(e) => e.to_string(),
        Ok(p) => format!("unexpectedly valid: {p:?}"),
    }
}

#[test]
fn coerces_like_ansible_and_fills_defaults() {
    let p = run(json!({"vmid": "101", "force": "yes", "rate": "10", "tags": "a,b"})).unwrap();
    assert_eq!(p.int("vmid"), Some(101));
    assert_eq!(p.bool("force"), Some(true));
    assert_eq!(p.float("rate"), Some(10.0));
    assert_eq!(p.list("tags").unwrap(), &vec![json!("a"), json!("b")]);
    assert_eq!(p.str("state"), Some("present"));
    assert!(!p.is_set("name"));
}

#[test]
fn error_messages_match_ansible_core() {
    // Each row: arguments, the message AnsibleModule would give (ansible-core 2.19).
    let cases = [
        (json!({"bogus": 1}), "Unsupported parameters for (test_mod) module: bogus. Supported parameters include: disk, disks, force, name, rate, secret, size, state, tags, vmid (vmname)."),
        (json!({"vmid": 1, "name": "x"}), "parameters are mutually exclusive: vmid|name"),
        (json!({"vmid": "abc"}), "argument 'vmid' is of type str and we were unable to convert to int: \"'abc'\" cannot be converted to an int"),
        (json!({"vmid": 1.5}), "argument 'vmid' is of type float and we were unable to convert to int: \"1.5\" cannot be converted to an int"),
        (json!({"force": "maybe"}), "argument 'force' is of type str and we were unable to convert to bool: The value 'maybe' is not a valid boolean. Valid booleans include: 'y', 'yes', 'on', '1', 'true', 't', 1, 1.0, True, 'n', 'no', 'off', '0', 'false', 'f', 0, 0.0, False"),
        (json!({"rate": [1]}), "argument 'rate' is of type list and we were unable to convert to float: <class 'list'> cannot be converted to a float"),
        (json!({"state": "gone"}), "value of state must be one of: present, absent, got: gone"),
        (json!({"state": "absent"}), "state is absent but any of the following are missing: vmid, name"),
        (json!({"size": "1G"}), "missing parameter(s) required by 'size': rate"),
    ];
    for (args, want) in cases {
        assert_eq!(err(args.clone()), want, "args: {args}");
    }
}

#[test]
fn suboptions_are_validated_like_ansible_core() {
    // Each row: arguments, ansible-core 2.19's ArgumentSpecValidator message for the same
    // spec (module_utils/common/parameters.py _validate_sub_spec), with AnsibleModule's prefix
    // for unsupported parameters.
    let cases = [
        (json!({"disk": {"version": "2.0"}}), "missing required arguments: storage found in disk"),
        (json!({"disk": {"storage": "x", "version": "3"}}), "value of version must be one of: 2.0, 1.2, got: 3 found in disk"),
        (json!({"disk": {"storage": "x", "keys": [1]}}), "argument 'keys' is of type list found in 'disk'. and we were unable to convert to bool: <class 'list'> cannot be converted to a bool"),
        (json!({"disk": {"storage": "x", "size": 1, "bogus": 2}}), "Unsupported parameters for (test_mod) module: disk.bogus, disk.size. Supported parameters include: keys, pin, storage, version (pincode)."),
        (json!({"disks": [{"storage": "a"}, {"storage": "b", "size": 1}]}), "Unsupported parameters for (test_mod) module: disks.size. Supported parameters include: keys, pin, storage, version (pincode)."),
        (json!({"disks": [{"storage": "a"}, {"version": "1.2"}]}), "missing required arguments: storage found in disks"),
        // Top-level checks come first: a bad vmid is reported before a bad sub-option.
        (json!({"vmid": "x", "disk": {}}), "argument 'vmid' is of type str and we were unable to convert to int: \"'x'\" cannot be converted to an int"),
    ];
    for (args, want) in cases {
        assert_eq!(err(args.clone()), want, "args: {args}");
    }
}

#[test]
fn suboptions_get_defaults_aliases_and_no_log() {
    let p = run(json!({"disk": "storage=local,keys=yes", "disks": [{"storage": "a", "pincode": "s3cr3t"}]})).unwrap();
    assert_eq!(
        p.dict("disk").unwrap(),
        json!({"keys": true, "pin": null, "storage": "local", "version": "2.0"}).as_object().unwrap()
    );
    assert_eq!(p.list("disks").unwrap()[0]["pin"], json!("s3cr3t"));
    assert_eq!(p.no_log_values(), ["s3cr3t"]);
    let p = run(json!({"disk": {"storage": "a", "pin": "1", "pincode": "2"}})).unwrap();
    assert_eq!(p.warnings(), ["Both option disk.pin and its alias disk.pincode are set."]);
    // An unset dict option stays unset: its sub-options are not filled in.
    assert!(!run(json!({})).unwrap().is_set("disk"));
}

#[test]
fn nulls_count_as_unset() {
    let p = run(json!({"vmid": null, "name": null, "state": null})).unwrap();
    assert!(!p.is_set("vmid"));
    assert_eq!(p.str("state"), Some("present"));
}

#[test]
fn alias_folds_into_option() {
    let p = run(json!({"vmname": "web"})).unwrap();
    assert_eq!(p.str("name"), Some("web"));
    let p = run(json!({"vmname": "web", "name": "db"})).unwrap();
    assert_eq!(p.str("name"), Some("db"));
    assert_eq!(p.warnings(), ["Both option name and its alias vmname are set."]);
}

#[test]
fn env_fallback_and_no_log_values() {
    let p = run_env(json!({}), &|k| (k == "TEST_SECRET").then(|| "s3cr3t".to_string())).unwrap();
    assert_eq!(p.str("secret"), Some("s3cr3t"));
    assert_eq!(p.no_log_values(), ["s3cr3t"]);
    let p = run_env(json!({"secret": "given"}), &|_| Some("env".into())).unwrap();
    assert_eq!(p.str("secret"), Some("given"));
}

#[test]
fn integral_strings_and_floats_are_ints() {
    assert_eq!(run(json!({"vmid": "3.0"})).unwrap().int("vmid"), Some(3));
    assert_eq!(run(json!({"vmid": 7.0})).unwrap().int("vmid"), Some(7));
}

#[test]
fn empty_counts_as_unset_for_options_with_an_environment_fallback() {
    // A `lookup('env', ...)` of an unset variable gives "": the environment still applies.
    let env = |k: &str| (k == "TEST_SECRET").then(|| "from-env".to_string());
    let p = run_env(json!({"secret": ""}), &env).unwrap();
    assert_eq!(p.str("secret"), Some("from-env"));
    // ... and with no variable, the option is unset (not set to "").
    let p = run(json!({"secret": ""})).unwrap();
    assert!(!p.is_set("secret"));
    // An empty variable is unset too.
    let p = run_env(json!({}), &|_| Some(String::new())).unwrap();
    assert!(!p.is_set("secret"));
    // Options without an environment fallback keep an empty string as given.
    let p = run(json!({"size": "", "rate": 1.0})).unwrap();
    assert_eq!(p.str("size"), Some(""));
}
