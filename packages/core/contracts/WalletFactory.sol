// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {Call, WalletAccount, WalletAccountErrors} from "./WalletAccount.sol";

/// @title WalletFactory
/// @notice Creates WalletAccounts at counterfactual addresses: an account's address is known, and can receive funds,
///         before it exists, and the first signed batch deploys it and runs in one transaction.
/// @dev Each account is an EIP-1167 minimal proxy (https://eips.ethereum.org/EIPS/eip-1167) of one WalletAccount
///      implementation, created with CREATE2 and salt keccak256(abi.encode(owner, salt)). The owner is part of the
///      salt, so nobody can take an owner's address for an account with another owner; the clone is initialised in
///      the transaction that creates it, so it is never observable without its owner.
contract WalletFactory is WalletAccountErrors {
    /// @notice The WalletAccount every account delegates to.
    address public immutable implementation;

    /// @dev keccak256 of the clone's creation code, fixed by `implementation`; used to predict addresses.
    bytes32 private immutable cloneCodeHash;

    /// @notice Emitted when an account is created.
    event AccountCreated(address indexed account, address indexed owner, bytes32 salt);

    /// @notice The implementation address has no code.
    error ImplementationNotDeployed();

    /// @notice CREATE2 failed (it cannot for an address that is still empty, unless the transaction ran out of gas).
    error CreateFailed();

    /// @param implementation_ A deployed WalletAccount.
    constructor(address implementation_) {
        if (implementation_.code.length == 0) revert ImplementationNotDeployed();
        implementation = implementation_;
        cloneCodeHash = keccak256(_cloneCode(implementation_));
    }

    /// @notice The address of the account of `owner` with `salt`, whether or not it exists yet.
    function accountAddress(address owner, bytes32 salt) public view returns (address) {
        bytes32 hash = keccak256(abi.encodePacked(bytes1(0xff), address(this), _salt(owner, salt), cloneCodeHash));
        return address(uint160(uint256(hash)));
    }

    /// @notice Creates the account of `owner` with `salt`, or returns it if it exists.
    function createAccount(address owner, bytes32 salt) public returns (address account) {
        account = accountAddress(owner, salt);
        if (account.code.length > 0) return account;

        bytes memory code = _cloneCode(implementation);
        bytes32 create2Salt = _salt(owner, salt);
        address created;
        assembly ("memory-safe") {
            created := create2(0, add(code, 0x20), mload(code), create2Salt)
        }
        if (created != account) revert CreateFailed();
        WalletAccount(payable(account)).initialize(owner);
        emit AccountCreated(account, owner, salt);
    }

    /// @notice Creates the account of `owner` with `salt` if needed, then executes a signed batch on it, in one
    ///         transaction. See `WalletAccount.execute`; its errors (such as `CallFailed`) pass through unchanged.
    function deployAndExecute(
        address owner,
        bytes32 salt,
        Call[] calldata calls,
        uint256 deadline,
        bytes calldata signature
    ) external returns (address account) {
        account = createAccount(owner, salt);
        WalletAccount(payable(account)).execute(calls, deadline, signature);
    }

    /// @dev The CREATE2 salt: binds the account to its owner.
    function _salt(address owner, bytes32 salt) private pure returns (bytes32) {
        return keccak256(abi.encode(owner, salt));
    }

    /// @dev EIP-1167 creation code for a clone of `target`: a 10-byte constructor that returns the 45-byte runtime,
    ///      which copies calldata, DELEGATECALLs `target`, and returns or reverts with its return data.
    function _cloneCode(address target) private pure returns (bytes memory) {
        return abi.encodePacked(
            hex"3d602d80600a3d3981f3", // constructor: RETURNDATASIZE DUP PUSH1 0x2d ... RETURN (copies 45 bytes)
            hex"363d3d373d3d3d363d73", // runtime: CALLDATACOPY, then PUSH20 <target>
            target,
            hex"5af43d82803e903d91602b57fd5bf3" // GAS DELEGATECALL, RETURNDATACOPY, JUMPI to RETURN, else REVERT
        );
    }
}
