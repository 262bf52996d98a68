//! Typed tools, prompts and questions: the JSON Schemas are derived from Rust types
//! (`schemars`), so the schema clients see and the struct the handler reads cannot drift apart.
//!
//! ```sh
//! cargo run -p smcp-examples --bin typed_tool                          # http://127.0.0.1:3000/mcp
//! cargo run -p smcp-examples --bin typed_tool -- --listen 127.0.0.1:0  # any free port
//! ```
//!
//! Then, in another terminal (`export SMCP_URL=http://127.0.0.1:3000/mcp`):
//! `cargo run -p smcp -- tool weather` shows the derived input and output schemas,
//! `cargo run -p smcp -- call weather --arg city=Lisbon --arg days=2` the `structuredContent`,
//! `cargo run -p smcp -- call book --arg city=Lisbon` asks you a form derived from a struct,
//! `cargo run -p smcp -- prompt packing_list --arg city=Oslo` renders the typed prompt, and
//! `cargo run -p smcp -- call mean --json-args '{"values": []}'` shows the server refusing a
//! result that breaks its own `outputSchema`.

// ANCHOR: readme
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use smcp_server::prelude::*;

// ANCHOR: types
// The tool's `inputSchema` is derived from this type, doc comments as descriptions; every
// call is checked against it before the handler runs.
/// Where and when.
#[derive(Debug, Deserialize, JsonSchema)]
struct WeatherArgs {
    /// City name, e.g. "Lisbon".
    city: String,
    /// Days ahead: 0 (today) to 7.
    #[serde(default)]
    #[schemars(range(max = 7))]
    days: u8,
}

// The tool's `outputSchema` is derived from this type; every result is checked against it
// before it leaves the server (and by the client when it arrives).
/// The forecast.
#[derive(Debug, Serialize, JsonSchema)]
struct Forecast {
    city: String,
    days: u8,
    celsius: f64,
    sky: Sky,
}

// A unit enum: a string with a fixed set of values in the schema.
/// What the sky does.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Sky {
    Clear,
    Cloudy,
    Rain,
}
// ANCHOR_END: types

// ANCHOR: weather
fn weather() -> ToolBuilder {
    tool("weather")
        .description("The (made-up) forecast for a city")
        .annotations(ToolAnnotations::new().read_only(true))
        .typed(|call, args: WeatherArgs| async move {
            // `?` works on progress and log notifications (a cancelled request ends here).
            call.ctx.progress(1.0, Some(1.0), Some("looked up")).await?;
            // `Json(..)` fills `structuredContent`, plus a text block with the same JSON.
            Ok(Json(forecast(args.city, args.days)))
        })
}
// ANCHOR_END: weather
// ANCHOR_END: readme

impl Sky {
    fn word(&self) -> &'static str {
        match self {
            Self::Clear => "clear",
            Self::Cloudy => "cloudy",
            Self::Rain => "rainy",
        }
    }
}

/// A forecast that depends only on the city and the day, so tests can predict it.
fn forecast(city: String, days: u8) -> Forecast {
    let seed = city.bytes().map(u32::from).sum::<u32>() + u32::from(days);
    let sky = match seed % 3 {
        0 => Sky::Clear,
        1 => Sky::Cloudy,
        _ => Sky::Rain,
    };
    Forecast {
        days,
        celsius: f64::from(seed % 30) + 0.5,
        sky,
        city,
    }
}

// ANCHOR: mean
/// The numbers.
#[derive(Debug, Deserialize, JsonSchema)]
struct MeanArgs {
    /// The numbers to average.
    values: Vec<f64>,
}

// The outputSchema says that `mean` is a number.
/// The mean.
#[derive(Debug, Serialize, JsonSchema)]
struct Mean {
    mean: f64,
}

fn mean() -> ToolBuilder {
    tool("mean")
        .description("The mean of some numbers")
        .typed(|_call, args: MeanArgs| async move {
            // A bug left in on purpose: the mean of no numbers is NaN, which JSON cannot
            // carry (it serializes as null). That result breaks the outputSchema, so the
            // server answers -32603 naming the failing member instead of sending it.
            #[allow(clippy::cast_precision_loss)]
            let mean = args.values.iter().sum::<f64>() / args.values.len() as f64;
            Ok(Json(Mean { mean }))
        })
}
// ANCHOR_END: mean

// ANCHOR: ask
/// The trip.
#[derive(Debug, Deserialize, JsonSchema)]
struct Trip {
    /// Where to.
    city: String,
}

// What `book` asks the user: the form's `requestedSchema` is derived from this type (a flat
// struct of strings, numbers, booleans and unit enums; `Option` fields are optional).
/// The booking.
#[derive(Debug, Deserialize, JsonSchema)]
struct Booking {
    /// How many seats?
    #[schemars(range(min = 1, max = 9))]
    seats: u8,
    /// A window seat?
    window: Option<bool>,
    /// Book it now?
    confirm: bool,
}

fn book() -> ToolBuilder {
    tool("book")
        .description("Books a trip, after asking the user how many seats")
        // Destructive: the confirmation cannot be replayed by a captured retry.
        .annotations(ToolAnnotations::new().destructive(true))
        .typed(|call, trip: Trip| async move {
            // Ends this round with an InputRequiredResult until the client answers; the
            // handler then runs again from the top and gets a `Booking` back.
            let answer = call.input.ask(mrtr::elicit_typed::<Booking>(
                "booking",
                format!("Book a trip to {}?", trip.city),
            ))?;
            let text = match answer {
                mrtr::Elicited::Accept(booking) if booking.confirm => {
                    let window = if booking.window == Some(true) {
                        ", window"
                    } else {
                        ""
                    };
                    format!("booked {} seat(s) to {}{window}", booking.seats, trip.city)
                }
                mrtr::Elicited::Accept(_) | mrtr::Elicited::Decline | mrtr::Elicited::Cancel => {
                    "nothing booked".to_owned()
                }
            };
            Ok(CallToolResult::text(text))
        })
}
// ANCHOR_END: ask

// ANCHOR: prompt
// The prompt's arguments are declared from this type: strings, required unless they have a
// default.
/// The trip.
#[derive(Debug, Deserialize, JsonSchema)]
struct PackingArgs {
    /// Where the trip goes.
    city: String,
    /// How long, e.g. "a weekend".
    #[serde(default = "a_few_days")]
    length: String,
}

fn a_few_days() -> String {
    "a few days".to_owned()
}

fn packing_list() -> PromptBuilder {
    prompt("packing_list")
        .description("Asks for a packing list that suits the weather")
        .typed(|_get, args: PackingArgs| async move {
            let today = forecast(args.city, 0);
            Ok(GetPromptResult::new(vec![PromptMessage::user_text(
                format!(
                    "I am going to {} for {}; it will be {} °C and {}. What should I pack?",
                    today.city,
                    args.length,
                    today.celsius,
                    today.sky.word()
                ),
            )]))
        })
}
// ANCHOR_END: prompt

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    smcp_examples::init_logging();
    let addr = smcp_examples::listen_addr()?; // 127.0.0.1:3000, or `--listen ADDR`
    // ANCHOR: main
    let server = Server::builder("weather", "1.0.0")
        .tool(weather())
        .tool(mean()) // a typed tool with a bug that the outputSchema check catches
        .tool(book()) // asks the user with a struct, gets the struct back
        .prompt(packing_list()) // a prompt whose arguments come from a struct
        .build()?;
    // Streamable HTTP at /mcp (`server.router("/mcp")` mounts it into an axum app instead,
    // `server.serve_stdio(..)` serves stdin and stdout).
    let listener = tokio::net::TcpListener::bind(addr).await?;
    println!("listening on http://{}/mcp", listener.local_addr()?);
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    smcp_server::serve(
        listener,
        server.endpoint("/mcp"),
        Default::default(),
        ctrl_c,
    )
    .await?;
    // ANCHOR_END: main
    Ok(())
}
