# frozen_string_literal: true

require_relative "lib/dossier/version"

Gem::Specification.new do |spec|
  spec.name = "dossier"
  spec.version = Dossier::VERSION
  spec.summary = "Ruby client for the Dossier background-investigation API"
  spec.description = "Dependency-free client for the Dossier v1 HTTP API (Net::HTTP): lookups, " \
                     "accounts and keys, typed errors, retries with backoff, idempotency keys and 202 polling."
  spec.authors = ["Dossier"]
  spec.files = Dir[File.join(__dir__, "lib", "**", "*.rb")].map { |f| f.delete_prefix("#{__dir__}/") } +
               ["README.md", "CHANGELOG.md", "dossier.gemspec"]
  spec.require_paths = ["lib"]
  spec.required_ruby_version = ">= 2.7"
end
