use super::*;

fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let map: BTreeMap<String, String> = pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
    move |k| map.get(k).cloned()
}

fn names(specs: &[BackendSpec]) -> Vec<&str> {
    specs.iter().map(|s| s.name.as_str()).collect()
}

fn parse(toml_text: &str) -> BackendSection {
    #[derive(Deserialize)]
    struct File {
        backend: BackendSection,
    }
    toml::from_str::<File>(toml_text).unwrap().backend
}

#[test]
fn nothing_configured_prefers_anthropic_then_openai() {
    let s = BackendSection::default();
    let env = env_of(&[("ANTHROPIC_API_KEY", "a"), ("OPENAI_API_KEY", "o")]);
    let specs = s.resolve(&Overrides::default(), &env, &mut || panic!("no probe")).unwrap();
    assert_eq!(names(&specs), ["anthropic", "openai"]);
    assert_eq!(specs[0].base_url, "https://api.anthropic.com");
    assert_eq!(specs[0].key, KeySource::Env("ANTHROPIC_API_KEY".into()));

    let env = env_of(&[("OPENAI_API_KEY", "o"), ("OPENAI_BASE_URL", "http://x/v1/")]);
    let specs = s.resolve(&Overrides::default(), &env, &mut || panic!("no probe")).unwrap();
    assert_eq!(names(&specs), ["openai"]);
    assert_eq!(specs[0].base_url, "http://x/v1");
}

#[test]
fn nothing_configured_probes_ollama_last_then_says_how_to_configure() {
    let s = BackendSection::default();
    let mut probed = 0;
    let specs = s
        .resolve(&Overrides::default(), &env_of(&[]), &mut || {
            probed += 1;
            true
        })
        .unwrap();
    assert_eq!(probed, 1);
    assert_eq!(names(&specs), ["ollama"]);
    assert_eq!(specs[0].key, KeySource::None);
    assert_eq!(specs[0].base_url, "http://127.0.0.1:11434/v1");

    let e = s.resolve(&Overrides::default(), &env_of(&[]), &mut || false).unwrap_err();
    assert_eq!(e.to_string(), NO_BACKEND);
}

#[test]
fn overrides_beat_env_beat_default() {
    let s = parse(
        r#"
        [backend]
        default = "anthropic"
        [backend.anthropic]
        api_key_cmd = "pass show anthropic/api-key"
        [backend.local]
        kind = "openai"
        base_url = "http://127.0.0.1:8080/v1"
        model = "qwen"
        "#,
    );
    let env = env_of(&[("UNIXAGENT_BACKEND", "local")]);
    let specs = s.resolve(&Overrides::default(), &env, &mut || false).unwrap();
    assert_eq!(names(&specs), ["local", "anthropic"]);
    assert_eq!(specs[0].key, KeySource::None);
    assert_eq!(specs[1].key, KeySource::Command("pass show anthropic/api-key".into()));

    let o = Overrides { backend: Some("anthropic".into()), model: Some("claude-opus".into()) };
    let specs = s.resolve(&o, &env, &mut || false).unwrap();
    assert_eq!(names(&specs), ["anthropic", "local"]);
    assert_eq!(specs[0].model, "claude-opus");
    assert_eq!(specs[1].model, "qwen");
}

#[test]
fn the_model_flag_beats_unixagent_model_beats_config() {
    let s = parse(
        "[backend]
default = \"local\"
[backend.local]
kind = \"openai\"
model = \"qwen\"
[backend.other]
kind = \"openai\"
model = \"llama\"
",
    );
    let specs = s.resolve(&Overrides::default(), &env_of(&[]), &mut || false).unwrap();
    assert_eq!(specs[0].model, "qwen");

    let env = env_of(&[("UNIXAGENT_MODEL", "gemma3-270m")]);
    let specs = s.resolve(&Overrides::default(), &env, &mut || false).unwrap();
    assert_eq!(names(&specs), ["local", "other"]);
    assert_eq!(specs[0].model, "gemma3-270m");
    assert_eq!(specs[1].model, "llama", "fallbacks keep their own model");

    let o = Overrides { backend: None, model: Some("from-flag".into()) };
    assert_eq!(s.resolve(&o, &env, &mut || false).unwrap()[0].model, "from-flag");

    let blank = env_of(&[("UNIXAGENT_MODEL", " ")]);
    assert_eq!(s.resolve(&Overrides::default(), &blank, &mut || false).unwrap()[0].model, "qwen");
}

#[test]
fn explicit_fallback_order_is_kept() {
    let s = parse(
        r#"
        [backend]
        default = "b"
        fallback = ["c", "ollama"]
        [backend.a]
        kind = "anthropic"
        [backend.b]
        kind = "openai"
        api_key_env = "B_KEY"
        [backend.c]
        kind = "anthropic"
        max_tokens = 100
        context_window = 5000
        "#,
    );
    let specs = s.resolve(&Overrides::default(), &env_of(&[]), &mut || false).unwrap();
    assert_eq!(names(&specs), ["b", "c", "ollama"]);
    assert_eq!(specs[0].key, KeySource::Env("B_KEY".into()));
    assert_eq!(specs[1].max_tokens, Some(100));
    assert_eq!(specs[0].max_tokens, None, "unset: the default follows the window");
    assert_eq!(specs[1].context_window, Some(5000));
}

#[test]
fn unknown_names_and_missing_kind_are_clear() {
    let s = parse("[backend]\n[backend.mystery]\nmodel = \"m\"\n");
    let o = Overrides { backend: Some("nope".into()), model: None };
    let e = s.resolve(&o, &env_of(&[]), &mut || false).unwrap_err();
    assert!(e.to_string().starts_with("unknown backend 'nope': add [backend.nope]"), "{e}");
    let o = Overrides { backend: Some("mystery".into()), model: None };
    let e = s.resolve(&o, &env_of(&[]), &mut || false).unwrap_err();
    assert_eq!(e.to_string(), "[backend.mystery] needs kind = \"anthropic\" or kind = \"openai\"");
}

#[test]
fn unknown_fields_are_rejected() {
    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct File {
        backend: BackendSection,
    }
    let e = toml::from_str::<File>("[backend.anthropic]\nmodle = \"x\"\n").unwrap_err();
    assert!(e.to_string().contains("modle"), "{e}");
}
