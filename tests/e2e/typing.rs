//! What unixagent does while an instruction is typed at the prompt: the
//! model backend is built then (it may run `api_key_cmd`, and the HTTP
//! client reads the system's certificates), so Enter does not wait for it;
//! a shell where nobody types an instruction builds nothing.

use std::time::Duration;

use crate::agent::model;
use crate::support::*;

#[test]
fn the_backend_is_built_while_an_instruction_is_typed_and_only_then() {
    for shell in ["bash", "zsh"] {
        let home = Home::new();
        let server = model("[[turn]]\ntext = \"typed-reply-ok\"\n");
        let built = home.path().join("key-asked");
        home.write(
            ".config/unixagent/config.toml",
            &format!(
                "[judge]\nmode = \"off\"\n[backend]\ndefault = \"fake\"\n[backend.fake]\nkind = \"anthropic\"\n\
                 base_url = \"{}\"\nmodel = \"fake-model\"\napi_key_cmd = \"touch '{}'; echo test-key\"\n",
                server.base_url(),
                built.display()
            ),
        );
        let mut t = home.spawn(shell).env("ANTHROPIC_API_KEY", "").start();
        wait_prompt(&t, 1);
        // A command of the user's builds nothing.
        run(&mut t, "echo plain-$((2+3))");
        t.wait_text("plain-5");
        wait_prompt(&t, 2);
        assert!(!built.exists(), "{shell}: the backend was built without an instruction");
        // Typing one does, before Enter.
        t.send("# say it");
        t.wait_text("# say it");
        assert!(
            eventually(Duration::from_secs(20), || built.exists()),
            "{shell}: the backend was not built while typing"
        );
        assert!(server.requests().is_empty(), "{shell}: the model was asked before Enter");
        t.send("\r");
        t.wait_text("typed-reply-ok");
        assert_eq!(home.instructions().len(), 0, "the home's own model is not the one asked");
        assert_eq!(server.requests().len(), 1, "{shell}");
    }
}
