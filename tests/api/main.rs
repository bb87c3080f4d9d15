//! The one integration-test binary. Every test boots the real application (the same `build` as
//! `main`) on port 0 with a fresh database, and talks to it over HTTP.
//!
//! Tests written with `both!` run twice: on SQLite, and on PostgreSQL (+ Redis). A PostgreSQL that
//! cannot be reached is skipped with a loud line, unless REQUIRE_SERVICES=1, where it fails.

mod contract;
mod helpers;

mod api_catalog;
mod api_reads;
mod apikeys;
mod audit;
mod auth;
mod booking_list;
mod browser;
mod browser_day;
mod browser_merchant;
mod catalog_pages;
mod cli;
mod code_counts;
mod code_pages;
mod code_uses;
mod codes;
mod connections;
mod events;
mod gate;
mod health;
mod hot_groups;
mod house;
mod i18n;
mod instances;
mod moves;
mod no_show;
mod openapi;
mod order_pages;
mod orders;
mod party;
mod people;
mod places;
mod proxies;
mod public_booking;
mod reconcile_changed;
mod reconcile_pages;
mod redis_cluster;
mod replica;
mod reservations;
mod schedule_editor;
mod secrets;
mod sellable;
mod sku_policy;
mod slot_pages;
mod slots;
mod staff_booking;
mod staff_day;
mod staff_members;
mod stock;
mod stock_import;
mod stock_reasons;
mod stock_report;
mod stock_tasks;
mod storefront;
mod sweep;
mod tenancy;
mod to_call;
mod waitlist;
mod web_links;
mod webhooks;
