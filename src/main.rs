//! The `sellable` binary: `serve` (default), `migrate`, `demo`, and set-up commands.

use std::io::{IsTerminal, Read};
use std::process::ExitCode;

use clap::Parser;
use sellable::config::{
    ApikeyCmd, Cli, Command, Config, GlobalArgs, MerchantCmd, ServeArgs, StoreCmd, UserCmd,
    WarehouseCmd,
};
use sellable::domain::{
    demo, reconcile, tenancy::apikeys, tenancy::tenants, tenancy::users, Actor, DomainError,
};
use sellable::infra::db::Db;

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    sellable::telemetry::init_logging(&cli.global.log_format);
    match run(cli).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            match e.downcast_ref::<DomainError>() {
                Some(d) => eprintln!("error: {}", d.message()),
                None => eprintln!("error: {e:#}"),
            }
            ExitCode::FAILURE
        }
    }
}

async fn run(cli: Cli) -> anyhow::Result<()> {
    let global = cli.global;
    let command = cli
        .command
        .unwrap_or(Command::Serve(ServeArgs::parse_default()));
    let cli_actor = Actor::system("cli");
    match command {
        Command::Serve(args) => serve(&global, args).await,
        Command::Reconcile { changed } => reconcile_cmd(&global, changed, &cli_actor).await,
        Command::Migrate => {
            connect(&global).await?;
            println!("Migrations applied.");
            Ok(())
        }
        Command::Analyze => {
            connect(&global).await?.analyze().await?;
            println!("Statistics brought up to date.");
            Ok(())
        }
        Command::Demo => {
            let db = connect(&global).await?;
            if !demo::is_empty(&db).await? {
                anyhow::bail!("the database already has merchants; the demo data loads only into an empty database");
            }
            let keys = sellable::load_code_keys(&global)?;
            demo::load(&db, &keys).await?;
            println!("Loaded the demo data.");
            print_demo_users();
            Ok(())
        }
        Command::Merchant(MerchantCmd::Add {
            slug,
            name,
            currency,
            language,
        }) => {
            let lang = language_arg(&language)?;
            let db = connect(&global).await?;
            let id =
                tenants::create_merchant(&db, &cli_actor, &slug, &name, &currency, "UTC").await?;
            tenants::set_language(&db, &cli_actor, id, lang, false).await?;
            println!("Merchant {slug} created (id {id}).");
            Ok(())
        }
        Command::Merchant(MerchantCmd::SetLanguage {
            slug,
            language,
            stores,
        }) => {
            let lang = language_arg(&language)?;
            let db = connect(&global).await?;
            let id = tenants::merchant_id_by_slug(&db, &slug).await?;
            tenants::set_language(&db, &cli_actor, id, lang, stores).await?;
            println!("Merchant {slug} now speaks {}.", lang.tag());
            Ok(())
        }
        Command::Store(StoreCmd::Add {
            merchant,
            slug,
            name,
            timezone,
            country,
        }) => {
            let db = connect(&global).await?;
            let id =
                tenants::create_store(&db, &cli_actor, &merchant, &slug, &name, &timezone).await?;
            if let Some(country) = country {
                tenants::set_store_country(&db, &cli_actor, id, &country).await?;
            }
            println!("Store {slug} created (id {id}).");
            Ok(())
        }
        Command::Warehouse(WarehouseCmd::Add {
            merchant,
            slug,
            name,
            priority,
        }) => {
            let db = connect(&global).await?;
            let id = tenants::create_warehouse(&db, &cli_actor, &merchant, &slug, &name, priority)
                .await?;
            println!("Warehouse {slug} created (id {id}).");
            Ok(())
        }
        Command::User(UserCmd::Add {
            email,
            role,
            merchant,
            store,
        }) => user_add(&global, &cli_actor, (&email, &role), merchant, store).await,
        Command::Apikey(ApikeyCmd::Create {
            merchant,
            name,
            rate_per_second,
        }) => {
            let db = connect(&global).await?;
            let merchant_id = tenants::merchant_id_by_slug(&db, &merchant).await?;
            let (_, key) =
                apikeys::create(&db, &cli_actor, merchant_id, &name, rate_per_second).await?;
            // Alone on stdout, so scripts can capture it: KEY=$(sellable apikey create --merchant demo)
            println!("{key}");
            Ok(())
        }
        Command::Apikey(ApikeyCmd::Rate {
            merchant,
            name,
            rate,
        }) => {
            let db = connect(&global).await?;
            let merchant_id = tenants::merchant_id_by_slug(&db, &merchant).await?;
            let rate = match rate.trim() {
                "default" => None,
                n => Some(n.parse::<i64>().map_err(|_| {
                    anyhow::anyhow!("{}", sellable::messages::bad_rate(0, apikeys::RATE_MAX))
                })?),
            };
            let key = apikeys::by_name(&db, merchant_id, &name).await?;
            apikeys::set_rate(&db, &cli_actor, merchant_id, key.id, rate).await?;
            println!(
                "{}",
                rate.map_or("default".to_string(), |n| format!("{n}/s"))
            );
            Ok(())
        }
    }
}

/// `sellable serve`: the server, with the demo data first when asked and the database is empty.
async fn serve(global: &GlobalArgs, args: ServeArgs) -> anyhow::Result<()> {
    let config = Config::from_args(global, &args);
    let db = connect(global).await?;
    if args.demo {
        if demo::is_empty(&db).await? {
            let keys = sellable::load_code_keys(global)?;
            demo::load(&db, &keys).await?;
            println!("Loaded the demo data.");
        }
        if demo::demo_users_present(&db).await? {
            print_demo_users();
        }
    }
    let app = sellable::build_with_db(config, db).await?;
    let addr = app.local_addr();
    println!("sellable is listening: sign in at http://{addr}/login");
    tracing::info!(%addr, "listening");
    app.run().await
}

/// `sellable reconcile`: exits 2 when an identity is broken, so a cron job can alert on it.
async fn reconcile_cmd(
    global: &GlobalArgs,
    changed: bool,
    cli_actor: &Actor,
) -> anyhow::Result<()> {
    let config = Config::from_args(global, &ServeArgs::parse_default());
    let mut db = connect(global).await?;
    db.gate = sellable::gate_for(&config)?;
    let report = if changed {
        reconcile::run_changed(&db, "cli", cli_actor).await?
    } else {
        reconcile::run(&db, "cli", cli_actor).await?
    };
    print_reconcile(&report);
    if !report.broken.is_empty() {
        std::process::exit(2);
    }
    Ok(())
}

/// `sellable user add`: the password from stdin, or a generated one printed once.
async fn user_add(
    global: &GlobalArgs,
    cli_actor: &Actor,
    (email, role): (&str, &str),
    merchant: Option<String>,
    store: Option<String>,
) -> anyhow::Result<()> {
    let db = connect(global).await?;
    let (password, generated) = read_or_generate_password()?;
    users::create(
        &db,
        cli_actor,
        users::NewUser {
            email,
            password: &password,
            role,
            merchant_slug: merchant.as_deref(),
            store_slug: store.as_deref(),
        },
    )
    .await?;
    if generated {
        println!(
            "User {} created. Password: {password}",
            email.trim().to_lowercase()
        );
    } else {
        println!("User {} created.", email.trim().to_lowercase());
    }
    Ok(())
}

/// A password piped on stdin is used as given (first line); otherwise one is generated.
fn read_or_generate_password() -> anyhow::Result<(String, bool)> {
    let stdin = std::io::stdin();
    if !stdin.is_terminal() {
        let mut buf = String::new();
        stdin.lock().read_to_string(&mut buf)?;
        let line = buf
            .lines()
            .next()
            .unwrap_or("")
            .trim_end_matches('\r')
            .to_string();
        if !line.is_empty() {
            return Ok((line, false));
        }
    }
    Ok((users::generate_password(), true))
}

fn print_demo_users() {
    println!("Demo sign-ins (demo data only; change them before real use):");
    for u in &demo::DEMO_USERS {
        println!("  {:<16} {:<26} password: {}", u.role, u.email, u.password);
    }
}

trait ParseDefault {
    fn parse_default() -> Self;
}

impl ParseDefault for ServeArgs {
    /// `sellable` with no subcommand serves, reading SELLABLE_BIND etc. from the environment.
    fn parse_default() -> Self {
        #[derive(clap::Parser)]
        struct Wrapper {
            #[command(flatten)]
            serve: ServeArgs,
        }
        Wrapper::parse_from(["sellable"]).serve
    }
}

/// The run, what is broken (frozen until an operator resolves it) and what was repaired.
fn print_reconcile(report: &reconcile::Report) {
    let r = &report.run;
    let reach = match (r.scope, r.seq_after, r.seq_upto) {
        (reconcile::RunScope::Changed, Some(after), Some(upto)) if upto > after => {
            format!("what changed (events {} to {upto})", after + 1)
        }
        (reconcile::RunScope::Changed, _, _) => "what changed (no event since the last run)".into(),
        _ => "everything".to_string(),
    };
    let took = r.finished_at.unwrap_or(r.started_at) - r.started_at;
    println!(
        "Reconciliation run #{}: {reach}; {} balances, slots and code lines checked in {took} ms; Redis {}.",
        r.id, r.checked, r.redis
    );
    if let Some(e) = &r.error {
        println!("The run failed: {e}");
    }
    if report.broken.is_empty() {
        println!("Broken identities: none.");
    } else {
        println!(
            "Broken identities: {} (frozen until an operator resolves them)",
            report.broken.len()
        );
        for f in &report.broken {
            println!("  finding #{} [{}] {}", f.id, f.kind, f.explain());
        }
    }
    if report.repaired.is_empty() {
        println!("Redis drift repaired: none.");
    } else {
        println!("Redis drift repaired: {}", report.repaired.len());
        for f in &report.repaired {
            println!("  finding #{} {}: {}", f.id, f.subject, f.found);
        }
    }
}

/// A `--language` value: zh-CN or en (the command line itself stays English).
fn language_arg(raw: &str) -> anyhow::Result<sellable::i18n::Lang> {
    sellable::i18n::Lang::parse(raw)
        .ok_or_else(|| anyhow::anyhow!("unknown language {raw:?}: use zh-CN or en"))
}

/// The database on the app's clock (SELLABLE_CLOCK_OFFSET_MS).
async fn connect(global: &GlobalArgs) -> anyhow::Result<Db> {
    let mut db = Db::connect(&global.database_url).await?;
    db.clock = global.clock();
    Ok(db)
}
